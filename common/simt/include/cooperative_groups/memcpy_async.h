/*
 * SIMT emulator: <cooperative_groups/memcpy_async.h> is not emulated. Without this
 * file the toolkit's own header would be found, and fail deep inside.
 */
#error "cooperative_groups/memcpy_async.h is not emulated (common/simt/README.md lists the cooperative groups that are); write it with the warp intrinsics (__shfl_up_sync, cp_async_16) instead"
