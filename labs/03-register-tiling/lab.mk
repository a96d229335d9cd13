# Lab 03's benchmark also times labs 01 and 02, so the whole ladder is in one table.
LAB_LADDER_03 := 01-naive-matmul 02-shared-memory-tiling
