# Lab 04's benchmark also times labs 01-03 (solutions), so the whole matmul ladder is in one table.
LAB_LADDER_04 := 01-naive-matmul 02-shared-memory-tiling 03-register-tiling
