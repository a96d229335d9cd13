// expect: calling a __device__ function
__device__ float twice(float x) { return 2 * x; }
int main() { return (int)twice(1.0f); }
