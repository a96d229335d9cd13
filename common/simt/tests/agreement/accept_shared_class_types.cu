// __shared__ variables of class types whose default constructor is
// implicit: a plain aggregate, default member initializers (not run on
// shared memory, but allowed), and = default.
struct Pair {
    float value;
    int index;
};

struct Running {
    float sum = 0.0f;
    int count = 0;
};

struct Slot {
    float v;
    Slot() = default;
};

__global__ void best(const float *x, float *out)
{
    __shared__ Pair top[32];
    __shared__ Running total;
    __shared__ Slot slots[32];
    int i = (int)threadIdx.x % 32;
    top[i].value = x[threadIdx.x];
    top[i].index = i;
    slots[i].v = x[threadIdx.x];
    if (threadIdx.x == 0) {
        total.sum = 0.0f;
        total.count = 0;
    }
    __syncthreads();
    out[threadIdx.x] = top[0].value + slots[i].v + total.sum + (float)total.count;
}
