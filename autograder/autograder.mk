# autograder/: grading. Until the full grader lands, `make grade` runs every
# lab's checks on $(SRC) and prints a table of what passes.

.PHONY: grade grade-run
grade: deps
	$(Q)$(MAKE) --no-print-directory grade-run

grade-run:
	+$(Q)BUILD=$(BUILD) SRC=$(SRC) TARGET=$(TARGET) bash autograder/grade_checks.sh $(LAB_NAMES)
