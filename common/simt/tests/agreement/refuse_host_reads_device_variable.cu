// expect: counter
__device__ int counter;
int main() { return counter; }
