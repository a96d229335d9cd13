/*
 * SIMT emulator: <cooperative_groups/reduce.h>, cg::reduce(tile, value, op)
 * with cg::plus, less, greater, bit_and, bit_or, bit_xor or any callable.
 * It combines by halving distances (xor shuffles within the tile), so a
 * float sum rounds in that order.
 */
#ifndef SIMT_COOPERATIVE_GROUPS_REDUCE_H
#define SIMT_COOPERATIVE_GROUPS_REDUCE_H

#include "../cooperative_groups.h"

namespace cooperative_groups {

/** @brief a + b. */
template <class T> struct plus { T operator()(const T &a, const T &b) const { return a + b; } };
/** @brief The smaller of a and b. */
template <class T> struct less { T operator()(const T &a, const T &b) const { return b < a ? b : a; } };
/** @brief The larger of a and b. */
template <class T> struct greater { T operator()(const T &a, const T &b) const { return a < b ? b : a; } };
/** @brief a & b. */
template <class T> struct bit_and { T operator()(const T &a, const T &b) const { return a & b; } };
/** @brief a | b. */
template <class T> struct bit_or { T operator()(const T &a, const T &b) const { return a | b; } };
/** @brief a ^ b. */
template <class T> struct bit_xor { T operator()(const T &a, const T &b) const { return a ^ b; } };

/** @brief op over val of every thread of the tile, returned to all of them. */
template <unsigned int N, class P, class T, class Op>
static inline T reduce(const thread_block_tile<N, P> &g, T val, Op op)
{
    for (unsigned int d = N / 2; d > 0; d /= 2) val = op(val, g.shfl_xor(val, d));
    return val;
}

} // namespace cooperative_groups

#endif
