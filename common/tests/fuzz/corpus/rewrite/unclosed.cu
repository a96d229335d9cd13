__global__ void k(int *p) {
  __shared__ int t[4];
  t[0] = 1;
  if (p) {
