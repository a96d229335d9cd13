// expect: cudaGetLastError in a __global__ function("check") needs relocatable device code
// The device runtime's cudaGetLastError in a kernel: nvcc compiles it, and
// ptxas stops at it ("Unresolved extern function '__cudaCDP2GetLastError'"),
// as the course builds without relocatable device code (-rdc=true).
__global__ void check(int *failed)
{
    if (cudaGetLastError() != cudaSuccess) failed[0] = 1;
}
