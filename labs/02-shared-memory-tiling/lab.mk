# Lab 02's benchmark also times lab 01's kernels, so the ladder so far is in one table.
LAB_LADDER_02 := 01-naive-matmul
