// The block-level cooperative groups a reduction uses.
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;

__global__ void block_sum(const float *in, float *out)
{
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
    float v = cg::reduce(warp, in[block.thread_rank()], cg::plus<float>());
    v += warp.shfl_down(v, 1) + (float)warp.ballot(v > 0) + (float)warp.meta_group_rank();
    block.sync();
    if (warp.thread_rank() == 0) atomicAdd(out, v);
}
