/*
 * SIMT emulator: Hopper's tensor-memory-access copies and warpgroup matrix
 * multiply, as the CUDA driver API documentation and the PTX ISA describe
 * them. The scheduling side (mbarrier sleeps, the TMA queue, the warpgroup
 * collective) is in simt_runtime.c; this file does the data movement and the
 * arithmetic:
 *
 *  - cuTensorMapEncodeTiled: the driver's argument rules, then a map of our
 *    own inside the opaque 128 bytes;
 *  - cp.async.bulk.tensor tile loads: the box, zeros past the tensor's edges,
 *    and the shared-memory swizzle;
 *  - wgmma.mma_async m64nNk16, bf16 or fp16 in, fp32 accumulators, both
 *    operands read from shared memory through matrix descriptors.
 *
 * Shared-memory addresses (what __cvta_generic_to_shared gives, what the
 * descriptors hold and what the swizzle patterns are made of) are offsets
 * into the block's extern __shared__ memory, so they fit the descriptors'
 * 18 bits as on the GPU.
 *
 * The swizzles are functions of the shared address: the 16-byte chunk bits
 * 4..6 are XORed with bits 7..9 (128-byte swizzle; 4..5 with 7..8 for 64
 * bytes, 4 with 7 for 32), so the pattern repeats every 1024 (512, 256)
 * bytes. TMA writes with this pattern and wgmma reads with it, which is why
 * a tile that TMA swizzled can be handed to wgmma unchanged.
 *
 * The canonical operand layouts, per 16-bit element (i along M or N, k along
 * K, T = 8 elements = 16 bytes, W = chunks per swizzle row: 1, 2, 4, 8):
 *   K-major, no swizzle:  (i/8) SBO + (i%8) 16 + (k/8) LBO + (k%8) 2
 *   K-major, swizzled:    (i/8) SBO + (i%8) 16W + (k/8) 16 + (k%8) 2
 *   MN-major, no swizzle: (i/8) SBO + (i%8) 2 + (k%8) 16 + (k/8) LBO
 *   MN-major, swizzled:   (i/8W) LBO + (i%8W) 2 + (k%8) 16W + (k/8) SBO
 * (in the swizzled K-major form the leading offset is not used).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda.h"
#include "simt_abi.h"
#include "simt_half_conv.h"
#include "simt_internal.h"

/* --- shared-memory window ---------------------------------------------------- */

/* On a GPU the static __shared__ variables and the dynamic memory share one
 * window. Here each static variable is a thread-local static of its own,
 * so the window gives the dynamic memory the addresses from 0 (TMA's
 * swizzle reads them) and the i-th static variable the block declared
 * those from (i + 1) << 24, far above any real shared address: an
 * address converts back exactly, and a kernel's arithmetic within a
 * variable stays within it. One past the end is an address too: C lets a
 * kernel form that pointer (a loop's bound, say), a GPU converts it, and
 * what reads or writes through an address checks the bytes it touches. */
enum { STATIC_WINDOW_SHIFT = 24 };

unsigned int simt_shared_addr(const void *p)
{
    const char *base = (const char *)simt_cur_block.dyn_shared, *c = (const char *)p;
    if (!simt_cur_thread)
        simt_fail("a shared-memory address (__cvta_generic_to_shared) asked for outside a kernel");
    if (base && c >= base && c <= base + simt_cur_block.dyn_shared_size) return (unsigned int)(c - base);
    const void *var;
    size_t bytes;
    int i = simt_static_shared_index(p, &var, &bytes);
    if (i >= 0) return ((unsigned int)(i + 1) << STATIC_WINDOW_SHIFT) + (unsigned int)(c - (const char *)var);
    simt_fail("a shared-memory address (__cvta_generic_to_shared) asked for a pointer outside the block's "
              "shared memory (its extern __shared__ memory and the __shared__ variables it has declared): "
              "pass a pointer into a shared tile");
}

unsigned int simt_dynamic_shared_addr(const void *p)
{
    const unsigned int addr = simt_shared_addr(p);
    if (addr >> STATIC_WINDOW_SHIFT)
        simt_fail("a shared-memory address for a Hopper instruction asked for a __shared__ variable's; the "
                  "emulator models TMA destinations and wgmma operands only in the block's extern __shared__ "
                  "memory: put them there");
    return addr;
}

void *simt_shared_ptr(unsigned long long addr, const char *who, const char *file, int line)
{
    if (!simt_cur_thread) simt_fail("%s at %s:%d: a shared-memory address used outside a kernel", who, file, line);
    if (addr >> STATIC_WINDOW_SHIFT == 0) {
        if (!simt_cur_block.dyn_shared)
            simt_fail("%s at %s:%d: shared address 0x%llx, but this launch has no dynamic shared memory, and "
                      "__cvta_generic_to_shared of a __shared__ variable gives no such address",
                      who, file, line, addr);
        return (char *)simt_cur_block.dyn_shared + addr;
    }
    size_t bytes;
    const char *name;
    const char *var = (const char *)simt_static_shared_var((unsigned int)(addr >> STATIC_WINDOW_SHIFT) - 1u,
                                                           &bytes, &name);
    if (addr >> 32 || !var)
        simt_fail("%s at %s:%d: 0x%llx is not a shared-memory address: a .shared instruction takes the address "
                  "__cvta_generic_to_shared gives (a 32-bit offset in the block's shared window), not a "
                  "pointer",
                  who, file, line, addr);
    return (char *)var + (addr & ((1u << STATIC_WINDOW_SHIFT) - 1u));
}

/* A pointer to bytes [addr, addr + n) of the window, or a failure naming who asked. */
static char *window(uint32_t addr, size_t n, const char *who)
{
    if (addr >> STATIC_WINDOW_SHIFT)
        simt_fail("%s: shared address 0x%x is a static __shared__ variable's; the emulator reads TMA "
                  "destinations and wgmma operands only from the block's extern __shared__ memory: put them "
                  "there",
                  who, addr);
    if ((size_t)addr + n > simt_cur_block.dyn_shared_size)
        simt_fail("%s: shared address 0x%x + %zu bytes is past the block's %zu bytes of dynamic shared memory", who,
                  addr, n, simt_cur_block.dyn_shared_size);
    return (char *)simt_cur_block.dyn_shared + addr;
}

/* Chunk bits XOR row bits: mask 7 for 128 bytes, 3 for 64, 1 for 32, 0 for none. */
static uint32_t swizzle(uint32_t addr, uint32_t mask)
{
    return addr ^ (((addr >> 7) & mask) << 4);
}

/* --- tensor maps ----------------------------------------------------------------- */

enum { TMAP_MAGIC = 0x54534d41u /* "AMST" */ };

/* What the emulator keeps in a CUtensorMap's opaque bytes. */
typedef struct {
    uint32_t magic;
    uint8_t rank, esize, swizzle_mask, unused;
    const char *base;
    uint64_t dim[5];
    uint64_t stride[5]; /* bytes; stride[0] = esize */
    uint32_t box[5];
} tmap;

_Static_assert(sizeof(tmap) <= sizeof(CUtensorMap), "the emulator's map must fit a CUtensorMap");

static CUresult bad(CUresult r, const char *what)
{
    fprintf(stderr, "cuTensorMapEncodeTiled (emulated): %s\n", what);
    return r;
}

static int elem_size(CUtensorMapDataType t)
{
    switch (t) {
    case CU_TENSOR_MAP_DATA_TYPE_UINT8: return 1;
    case CU_TENSOR_MAP_DATA_TYPE_UINT16:
    case CU_TENSOR_MAP_DATA_TYPE_FLOAT16:
    case CU_TENSOR_MAP_DATA_TYPE_BFLOAT16: return 2;
    case CU_TENSOR_MAP_DATA_TYPE_UINT32:
    case CU_TENSOR_MAP_DATA_TYPE_INT32:
    case CU_TENSOR_MAP_DATA_TYPE_FLOAT32:
    case CU_TENSOR_MAP_DATA_TYPE_FLOAT32_FTZ:
    case CU_TENSOR_MAP_DATA_TYPE_TFLOAT32:
    case CU_TENSOR_MAP_DATA_TYPE_TFLOAT32_FTZ: return 4;
    case CU_TENSOR_MAP_DATA_TYPE_UINT64:
    case CU_TENSOR_MAP_DATA_TYPE_INT64:
    case CU_TENSOR_MAP_DATA_TYPE_FLOAT64: return 8;
    default: return 0; /* the packed 4- and 6-bit types, or not a type */
    }
}

CUresult cuTensorMapEncodeTiled(CUtensorMap *tensorMap, CUtensorMapDataType tensorDataType, cuuint32_t tensorRank,
                                void *globalAddress, const cuuint64_t *globalDim, const cuuint64_t *globalStrides,
                                const cuuint32_t *boxDim, const cuuint32_t *elementStrides,
                                CUtensorMapInterleave interleave, CUtensorMapSwizzle swizzle_mode,
                                CUtensorMapL2promotion l2Promotion, CUtensorMapFloatOOBfill oobFill)
{
    char msg[160];
    if (!tensorMap || (uintptr_t)tensorMap % 64 != 0)
        return bad(CUDA_ERROR_INVALID_VALUE, "tensorMap must be a 64-byte aligned CUtensorMap");
    if ((unsigned)tensorDataType > CU_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B)
        return bad(CUDA_ERROR_INVALID_VALUE, "tensorDataType is not a CUtensorMapDataType");
    int esize = elem_size(tensorDataType);
    if (!esize) return bad(CUDA_ERROR_NOT_SUPPORTED, "the packed 4- and 6-bit types are not emulated");
    if (tensorRank < 1 || tensorRank > 5) return bad(CUDA_ERROR_INVALID_VALUE, "tensorRank must be 1 to 5");
    if ((unsigned)interleave > CU_TENSOR_MAP_INTERLEAVE_32B)
        return bad(CUDA_ERROR_INVALID_VALUE, "interleave is not a CUtensorMapInterleave");
    if (interleave != CU_TENSOR_MAP_INTERLEAVE_NONE)
        return bad(CUDA_ERROR_NOT_SUPPORTED, "interleaved layouts are not emulated");
    if (!globalAddress || (uintptr_t)globalAddress % 16 != 0)
        return bad(CUDA_ERROR_INVALID_VALUE, "globalAddress must be 16-byte aligned");
    if (!globalDim || !boxDim || !elementStrides || (tensorRank > 1 && !globalStrides))
        return bad(CUDA_ERROR_INVALID_VALUE, "globalDim, globalStrides, boxDim and elementStrides are needed");
    tmap m;
    memset(&m, 0, sizeof(m));
    m.magic = TMAP_MAGIC;
    m.rank = (uint8_t)tensorRank;
    m.esize = (uint8_t)esize;
    m.base = (const char *)globalAddress;
    m.stride[0] = (uint64_t)esize;
    for (cuuint32_t i = 0; i < tensorRank; i++) {
        if (globalDim[i] < 1 || globalDim[i] > (1ull << 32)) {
            snprintf(msg, sizeof msg, "globalDim[%u] = %llu must be 1 to 2^32", i, (unsigned long long)globalDim[i]);
            return bad(CUDA_ERROR_INVALID_VALUE, msg);
        }
        if (boxDim[i] < 1 || boxDim[i] > 256) {
            snprintf(msg, sizeof msg, "boxDim[%u] = %u must be 1 to 256", i, boxDim[i]);
            return bad(CUDA_ERROR_INVALID_VALUE, msg);
        }
        if (elementStrides[i] < 1 || elementStrides[i] > 8) {
            snprintf(msg, sizeof msg, "elementStrides[%u] = %u must be 1 to 8", i, elementStrides[i]);
            return bad(CUDA_ERROR_INVALID_VALUE, msg);
        }
        /* Every dimension, the innermost too: a stride of 2 there makes the
         * TMA unit take every other element of each row (the driver's
         * elementStrides), which the copy below does not do. */
        if (elementStrides[i] != 1)
            return bad(CUDA_ERROR_NOT_SUPPORTED, "element strides other than 1 are not emulated");
        m.dim[i] = globalDim[i];
        m.box[i] = boxDim[i];
        if (i > 0) {
            uint64_t s = globalStrides[i - 1], below = m.stride[i - 1] * m.dim[i - 1];
            if (s % 16 != 0 || s >= (1ull << 40)) {
                snprintf(msg, sizeof msg, "globalStrides[%u] = %llu bytes must be a multiple of 16 below 2^40", i - 1,
                         (unsigned long long)s);
                return bad(CUDA_ERROR_INVALID_VALUE, msg);
            }
            if (s < below) {
                snprintf(msg, sizeof msg,
                         "globalStrides[%u] = %llu bytes is less than the %llu bytes of the dimension below it "
                         "(strides are in bytes, not elements)",
                         i - 1, (unsigned long long)s, (unsigned long long)below);
                return bad(CUDA_ERROR_INVALID_VALUE, msg);
            }
            m.stride[i] = s;
        }
    }
    uint32_t inner = boxDim[0] * (uint32_t)esize;
    if (inner % 16 != 0) {
        snprintf(msg, sizeof msg, "boxDim[0] x element size = %u bytes must be a multiple of 16", inner);
        return bad(CUDA_ERROR_INVALID_VALUE, msg);
    }
    uint32_t span = 0;
    switch (swizzle_mode) {
    case CU_TENSOR_MAP_SWIZZLE_NONE: break;
    case CU_TENSOR_MAP_SWIZZLE_32B: span = 32; m.swizzle_mask = 1; break;
    case CU_TENSOR_MAP_SWIZZLE_64B: span = 64; m.swizzle_mask = 3; break;
    case CU_TENSOR_MAP_SWIZZLE_128B: span = 128; m.swizzle_mask = 7; break;
    case CU_TENSOR_MAP_SWIZZLE_128B_ATOM_32B:
    case CU_TENSOR_MAP_SWIZZLE_128B_ATOM_32B_FLIP_8B:
    case CU_TENSOR_MAP_SWIZZLE_128B_ATOM_64B:
        return bad(CUDA_ERROR_NOT_SUPPORTED, "the 128B_ATOM swizzles are not emulated");
    default: return bad(CUDA_ERROR_INVALID_VALUE, "swizzle is not a CUtensorMapSwizzle");
    }
    if (span && inner > span) {
        snprintf(msg, sizeof msg, "the box's inner dimension (%u bytes) must be at most the swizzle span (%u bytes)",
                 inner, span);
        return bad(CUDA_ERROR_INVALID_VALUE, msg);
    }
    if (span && inner < span) {
        snprintf(msg, sizeof msg,
                 "a box of %u-byte rows under the %u-byte swizzle is not emulated (make the rows the swizzle span)",
                 inner, span);
        return bad(CUDA_ERROR_NOT_SUPPORTED, msg);
    }
    if ((unsigned)l2Promotion > CU_TENSOR_MAP_L2_PROMOTION_L2_256B)
        return bad(CUDA_ERROR_INVALID_VALUE, "l2Promotion is not a CUtensorMapL2promotion");
    if (oobFill == CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA)
        return bad(CUDA_ERROR_NOT_SUPPORTED, "the NaN out-of-bounds fill is not emulated");
    if (oobFill != CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE)
        return bad(CUDA_ERROR_INVALID_VALUE, "oobFill is not a CUtensorMapFloatOOBfill");
    memset(tensorMap, 0, sizeof(*tensorMap));
    memcpy(tensorMap, &m, sizeof(m));
    return CUDA_SUCCESS;
}

/* --- TMA tile loads ------------------------------------------------------------- */

void simt_tma_load(void *dst, const void *tensor_map, const int *coords, int ncoords, uint64_t *bar)
{
    tmap m;
    if (!tensor_map) simt_fail("cp.async.bulk.tensor with a null tensor map");
    memcpy(&m, tensor_map, sizeof(m));
    if (m.magic != TMAP_MAGIC)
        simt_fail("cp.async.bulk.tensor: the tensor map was not made by cuTensorMapEncodeTiled (or it was "
                  "passed by a host pointer: pass the CUtensorMap itself as a __grid_constant__ kernel parameter)");
    if (ncoords != m.rank)
        simt_fail("cp.async.bulk.tensor.%dd on a tensor map of rank %d", ncoords, m.rank);
    if (!bar) simt_fail("cp.async.bulk.tensor without an mbarrier");
    uint32_t addr = simt_dynamic_shared_addr(dst), repeat = (m.swizzle_mask + 1u) * 128u;
    if (addr % 128 != 0)
        simt_fail("cp.async.bulk.tensor: shared destination 0x%x is not 128-byte aligned", addr);
    if (m.swizzle_mask && addr % repeat != 0)
        simt_fail("cp.async.bulk.tensor: swizzled shared destination 0x%x is not aligned to the %u-byte period of "
                  "its swizzle pattern (the emulator asks for that alignment; align the buffer)",
                  addr, repeat);
    simt_tma_op op;
    memset(&op, 0, sizeof(op));
    memcpy(op.map, tensor_map, sizeof(op.map));
    uint64_t bytes = m.esize;
    for (int i = 0; i < m.rank; i++) {
        op.coords[i] = coords[i];
        bytes *= m.box[i];
    }
    (void)window(addr, (size_t)bytes, "cp.async.bulk.tensor");
    /* The copy may write any time from now on, and a wgmma may read its
     * operands any time until wgmma.wait_group lets its group go: a stage
     * refilled while a wgmma still reads it is a race on the GPU (it shows
     * when the tensor cores run late). */
    unsigned int reader;
    const int first_fill = simt_tma_first_fill(addr, addr + (uint32_t)bytes);
    if (first_fill && simt_wgmma_reads_in_flight(addr, addr + (uint32_t)bytes, &reader))
        simt_fail("a wgmma of thread %u reads shared bytes [0x%x, 0x%x) that no copy had filled yet: this is the "
                  "first cp.async.bulk.tensor into them. The consumer's wait on the stage's full barrier returned "
                  "before the copy landed: check its parity (a fresh barrier is in phase 0, and a wait for parity 1 "
                  "returns at once), and that every wgmma of a stage comes after that wait",
                  reader, addr, addr + (unsigned)bytes);
    if (simt_wgmma_reads_in_flight(addr, addr + (uint32_t)bytes, &reader))
        simt_fail("cp.async.bulk.tensor overwrites shared bytes [0x%x, 0x%x) that a wgmma of thread %u still reads: "
                  "it is in flight until a wgmma.wait_group lets its group go, so release a stage (arrive on its "
                  "empty barrier) only after that wait",
                  addr, addr + (unsigned)bytes, reader);
    if (simt_wgmma_reads_unordered(addr, addr + (uint32_t)bytes, &reader))
        simt_fail("cp.async.bulk.tensor overwrites shared bytes [0x%x, 0x%x) that a wgmma of warpgroup %u may still "
                  "read: that warpgroup released the stage (arrived on the mbarrier this thread waited on) before "
                  "a wgmma.wait_group had let go of the wgmma reading it; wait first, then arrive",
                  addr, addr + (unsigned)bytes, reader);
    op.dst = dst;
    op.bar = bar;
    op.bytes = (unsigned int)bytes;
    simt_tma_enqueue(&op);
}

/* One element, by a load and a store of its own width: gcc's ThreadSanitizer
 * does not see a memcpy it expands inline, and the copy's writes are what a
 * kernel that reads a stage before waiting races with. */
static void copy_elem(char *to, const char *from, int esize)
{
    switch (esize) {
    case 1: *(uint8_t *)to = from ? *(const uint8_t *)from : 0; break;
    case 2: *(uint16_t *)to = from ? *(const uint16_t *)from : 0; break;
    case 4: *(uint32_t *)to = from ? *(const uint32_t *)from : 0; break;
    default: *(uint64_t *)to = from ? *(const uint64_t *)from : 0; break;
    }
}

void simt_tma_run(const simt_tma_op *op)
{
    tmap m;
    memcpy(&m, op->map, sizeof(m));
    uint32_t base = simt_dynamic_shared_addr(op->dst);
    uint32_t idx[5] = {0, 0, 0, 0, 0};
    uint64_t n = 1;
    for (int d = 0; d < m.rank; d++) n *= m.box[d];
    /* Box elements in order, innermost first: element e lands e * esize bytes
     * into the box, then the swizzle moves its 16-byte chunk. */
    for (uint64_t e = 0; e < n; e++) {
        int inside = 1;
        uint64_t off = 0;
        for (int d = 0; d < m.rank; d++) {
            int64_t g = (int64_t)op->coords[d] + idx[d];
            if (g < 0 || (uint64_t)g >= m.dim[d]) inside = 0;
            else off += (uint64_t)g * m.stride[d];
        }
        char *to = window(swizzle(base + (uint32_t)(e * m.esize), m.swizzle_mask), m.esize, "cp.async.bulk.tensor");
        copy_elem(to, inside ? m.base + off : NULL, m.esize);
        for (int d = 0; d < m.rank && ++idx[d] == m.box[d]; d++) idx[d] = 0;
    }
}

/* --- wgmma ---------------------------------------------------------------------- */

/* A decoded shared-memory matrix descriptor. */
typedef struct {
    uint32_t start, lbo, sbo, mask;
    int mode; /* 0 none, 1 128-byte, 2 64-byte, 3 32-byte swizzle */
} desc_t;

/* The descriptor's fields, unchecked. */
static desc_t fields(uint64_t d)
{
    desc_t r;
    r.start = (uint32_t)(d & 0x3fff) << 4;
    r.lbo = (uint32_t)(d >> 16 & 0x3fff) << 4;
    r.sbo = (uint32_t)(d >> 32 & 0x3fff) << 4;
    r.mode = (int)(d >> 62);
    r.mask = r.mode == 1 ? 7u : r.mode == 2 ? 3u : r.mode == 3 ? 1u : 0u;
    return r;
}

/* The fields, checked against what the emulator models. */
static desc_t decode(uint64_t d, const char *which)
{
    desc_t r = fields(d);
    int base_offset = (int)(d >> 49 & 7);
    if (base_offset != 0)
        simt_fail("wgmma: %s's descriptor has base offset %d, which the emulator does not model (start swizzled "
                  "operands on their pattern's period and leave it 0)",
                  which, base_offset);
    if (r.mask && (r.start >> 7 & r.mask) != 0)
        simt_fail("wgmma: %s starts at shared address 0x%x, %u rows into its swizzle pattern; the emulator "
                  "wants swizzled operands to start in the pattern's first row (a multiple of %u bytes, plus an "
                  "offset along that row)",
                  which, r.start, r.start >> 7 & r.mask, (r.mask + 1u) * 128u);
    return r;
}

/* Byte offset of element (i along M or N, k along K) before the swizzle. */
static uint32_t operand_offset(const desc_t *s, int mn_major, uint32_t i, uint32_t k)
{
    uint32_t w = s->mask + 1; /* 16-byte chunks per swizzle row */
    if (!mn_major) {
        if (!s->mask) return i / 8 * s->sbo + i % 8 * 16 + k / 8 * s->lbo + k % 8 * 2;
        return i / 8 * s->sbo + i % 8 * 16 * w + k / 8 * 16 + k % 8 * 2;
    }
    if (!s->mask) return i / 8 * s->sbo + i % 8 * 2 + k % 8 * 16 + k / 8 * s->lbo;
    return i / (8 * w) * s->lbo + i % (8 * w) * 2 + k % 8 * 16 * w + k / 8 * s->sbo;
}

static double operand(const desc_t *s, int mn_major, uint32_t i, uint32_t k, int bf16, const char *which)
{
    /* A typed load, which ThreadSanitizer sees (an inlined memcpy it does not). */
    uint16_t h = *(const uint16_t *)window(swizzle(s->start + operand_offset(s, mn_major, i, k), s->mask), 2, which);
    return bf16 ? simt_bf16_bits_to_float(h) : simt_half_bits_to_float(h);
}

/* The shared bytes an operand of rows x 16 (rows along M or N) may read:
 * offsets grow with both indices, so the first and last elements bound
 * them; a swizzle moves 16-byte chunks only within the swizzle's row (128,
 * 64 or 32 bytes), so whole rows bound a swizzled operand. The descriptor
 * is checked later, when the wgmma runs. */
static void operand_span(uint64_t d, int mn_major, uint32_t rows, uint32_t *lo, uint32_t *hi)
{
    desc_t s = fields(d);
    *lo = s.start;
    *hi = s.start + operand_offset(&s, mn_major, rows - 1, 15) + 2;
    if (s.mask) {
        uint32_t seg = (s.mask + 1u) * 16u; /* the swizzle's row: 128, 64 or 32 bytes */
        *lo &= ~(seg - 1u);
        *hi = (*hi + seg - 1u) & ~(seg - 1u);
    }
}

void simt_wgmma(float *d, int n, uint64_t desc_a, uint64_t desc_b, int scale_d, int neg_a, int neg_b, int trans_a,
                int trans_b, int bf16)
{
    simt_wgmma_queue *q = simt_thread_wgmma_queue();
    if (!q) simt_fail("wgmma in host code");
    if (n < 8 || n > 256 || n % 8 != 0) simt_fail("wgmma m64n%dk16: N must be a multiple of 8 from 8 to 256", n);
    /* PTX requires a wgmma.fence before a warpgroup's first wgmma.mma_async
     * (and after any write to registers a wgmma reads). Without one ptxas
     * inserts it and says so (C7519), and the result is right; here the
     * omission fails, so that it is fixed where it is made. Only the first
     * is modelled: register accesses are not visible to the emulator. */
    if (!q->fenced)
        simt_fail("wgmma.mma_async before any wgmma.fence: call wgmma_fence() before the first wgmma of each "
                  "k-tile (PTX requires one before a warpgroup's first wgmma and after any write to the registers "
                  "a wgmma uses; without it ptxas inserts one and reports C7519)");
    if (q->count == SIMT_WGMMA_MAX)
        simt_fail("more than %d wgmma.mma_async in flight: wait for them (wgmma.wait_group)", SIMT_WGMMA_MAX);
    simt_wgmma_op *o = &q->op[q->count++];
    o->d = d;
    o->desc_a = desc_a;
    o->desc_b = desc_b;
    o->n = n;
    o->scale_d = scale_d != 0;
    o->neg_a = neg_a < 0;
    o->neg_b = neg_b < 0;
    o->trans_a = trans_a != 0;
    o->trans_b = trans_b != 0;
    o->bf16 = bf16 != 0;
    o->group = -1;
    o->seq = ++q->issued;
    operand_span(desc_a, o->trans_a, 64, &o->lo[0], &o->hi[0]);
    operand_span(desc_b, o->trans_b, (uint32_t)n, &o->lo[1], &o->hi[1]);
}

void simt_wgmma_fence(void)
{
    simt_wgmma_queue *q = simt_thread_wgmma_queue();
    if (!q) simt_fail("wgmma.fence in host code");
    q->fenced = 1;
}

void simt_wgmma_commit(void)
{
    simt_wgmma_queue *q = simt_thread_wgmma_queue();
    if (!q) return;
    for (int i = 0; i < q->count; i++)
        if (q->op[i].group < 0) q->op[i].group = q->groups;
    q->groups++;
}

/* One thread's part in wgmma.wait_group. */
typedef struct {
    simt_wgmma_queue *q;
    int keep_from; /* groups numbered >= this stay in flight */
    const char *error;
} wait_arg;

static int runnable(const simt_wgmma_op *o, int keep_from) { return o->group >= 0 && o->group < keep_from; }

static int same_op(const simt_wgmma_op *a, const simt_wgmma_op *b)
{
    return a->desc_a == b->desc_a && a->desc_b == b->desc_b && a->n == b->n && a->scale_d == b->scale_d &&
           a->neg_a == b->neg_a && a->neg_b == b->neg_b && a->trans_a == b->trans_a && a->trans_b == b->trans_b &&
           a->bf16 == b->bf16;
}

/* Where accumulator i = 4j + e of warpgroup thread th (warp w = th / 32,
 * lane l) lies in the 64 x n result, row-major: D[16w + l/4 + 8(e/2)]
 * [8j + 2(l%4) + e%2]. */
static uint32_t acc_index(int th, uint32_t i, uint32_t n)
{
    uint32_t w = (uint32_t)th / 32, l = (uint32_t)th % 32, j = i / 4, e = i % 4;
    return (16 * w + l / 4 + 8 * (e / 2)) * n + 8 * j + 2 * (l % 4) + e % 2;
}

/* Run one m64nNk16 for the whole warpgroup (thread th holds n / 2
 * accumulators, placed as acc_index says). The sums are exact in double and
 * rounded once to fp32 (a GPU may round or truncate each step: the course's
 * tolerances allow for that). */
static void run_one(wait_arg *const *t, int op)
{
    const simt_wgmma_op *o = &t[0]->q->op[op];
    desc_t a = decode(o->desc_a, "wgmma operand A"), b = decode(o->desc_b, "wgmma operand B");
    /* Scratch on the heap: the fiber stacks are small, and a buffer shared
     * by the OS thread's fibers would look like a race to TSan. */
    uint32_t n = (uint32_t)o->n;
    double *A = malloc(sizeof(double) * 64 * 16), *B = malloc(sizeof(double) * 16 * n),
           *D = malloc(sizeof(double) * 64 * n);
    if (!A || !B || !D) simt_fail("out of memory for wgmma");
    for (uint32_t i = 0; i < 64; i++)
        for (uint32_t k = 0; k < 16; k++)
            A[i * 16 + k] = (o->neg_a ? -1.0 : 1.0) * operand(&a, o->trans_a, i, k, o->bf16, "wgmma operand A");
    for (uint32_t k = 0; k < 16; k++)
        for (uint32_t j = 0; j < n; j++)
            B[k * n + j] = (o->neg_b ? -1.0 : 1.0) * operand(&b, o->trans_b, j, k, o->bf16, "wgmma operand B");
    /* D starts as the accumulators (or zero), then gains A's column k times
     * B's row k for k = 0..15 in turn: each element adds its 16 products in
     * order, but the adds along a row of D do not wait for each other, as
     * those of one dot product must. */
    for (int th = 0; th < 128; th++) {
        const float *d = t[th]->q->op[op].d;
        for (uint32_t i = 0; i < n / 2; i++) D[acc_index(th, i, n)] = o->scale_d ? d[i] : 0.0;
    }
    for (uint32_t i = 0; i < 64; i++)
        for (uint32_t k = 0; k < 16; k++) {
            double aik = A[i * 16 + k];
            for (uint32_t j = 0; j < n; j++) D[i * n + j] += aik * B[k * n + j];
        }
    for (int th = 0; th < 128; th++) {
        float *d = t[th]->q->op[op].d;
        for (uint32_t i = 0; i < n / 2; i++) d[i] = (float)D[acc_index(th, i, n)];
    }
    free(A);
    free(B);
    free(D);
}

static void wait_combine(void *const *args, unsigned int n)
{
    wait_arg *t[128];
    const char *error = NULL;
    if (n != 128) error = "wgmma needs whole warpgroups of 128 threads (the block's last one is short)";
    for (unsigned int i = 0; i < n && !error; i++)
        if (!(t[i] = (wait_arg *)args[i]))
            error = "wgmma.wait_group: a thread of the warpgroup has exited (all 128 must take part)";
    /* Every thread must have issued the same operations: a wgmma is one
     * instruction of the whole warpgroup. */
    if (!error) {
        for (int th = 1; th < 128 && !error; th++) {
            const simt_wgmma_queue *q = t[th]->q, *q0 = t[0]->q;
            if (q->count != q0->count || t[th]->keep_from != t[0]->keep_from) {
                error = "the threads of a warpgroup issued different numbers of wgmma, commits or waits";
                break;
            }
            for (int i = 0; i < q->count; i++)
                if (!same_op(&q->op[i], &q0->op[i]) || q->op[i].group != q0->op[i].group) {
                    error = "the threads of a warpgroup issued wgmma with different descriptors or shapes";
                    break;
                }
        }
    }
    if (error) {
        for (unsigned int i = 0; i < n; i++)
            if (args[i]) ((wait_arg *)args[i])->error = error;
        return;
    }
    unsigned int done = t[0]->q->done;
    for (int i = 0; i < t[0]->q->count; i++)
        if (runnable(&t[0]->q->op[i], t[0]->keep_from)) {
            run_one(t, i);
            done = t[0]->q->op[i].seq;
        }
    for (int th = 0; th < 128; th++) t[th]->q->done = done;
    for (int th = 0; th < 128; th++) { /* drop what ran, keep the rest in order */
        simt_wgmma_queue *q = t[th]->q;
        int kept = 0;
        for (int i = 0; i < q->count; i++)
            if (!runnable(&q->op[i], t[th]->keep_from)) q->op[kept++] = q->op[i];
        q->count = kept;
    }
}

void simt_wgmma_wait(int n)
{
    simt_wgmma_queue *q = simt_thread_wgmma_queue();
    if (!q) simt_fail("wgmma.wait_group in host code");
    wait_arg arg = {q, q->groups - (n < 0 ? 0 : n), NULL};
    simt_group_collective(128, &arg, wait_combine);
    if (arg.error) simt_fail("%s", arg.error);
}
