# A lab.mk a student might ship; the grader never reads it.
CFLAGS += -DGRADE_EVERYTHING_PASSES
