# A distributed lab: its check and bench link the communicator (common/comm.h) and MPI.
LAB_MPI_90 := 1
