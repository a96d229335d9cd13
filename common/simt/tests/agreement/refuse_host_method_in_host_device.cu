// expect: calling a __host__ function("Params::scale") from a __host__ __device__ function("scaled_one") is not allowed
// A __host__ __device__ function is compiled for the GPU too, where a
// member function without __device__ does not exist (a warning, #20014-D,
// that -Werror all-warnings makes an error). nvcc reports it in a pass of
// its own, before refuse_host_method_in_kernel.cu's errors.
struct Params {
    float s;
    float scale(float x) const { return s * x; }
};

__host__ __device__ float scaled_one(const Params &p) { return p.scale(1.0f); } // refused
