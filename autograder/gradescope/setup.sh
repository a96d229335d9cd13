#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds the autograder image.
# It installs the course's Debian packages (the list in
# common/tools/deps.sh), creates the unprivileged user that student code
# runs as, and builds the grader inside the course copy shipped in the zip.
# The CUDA toolkit is not installed here: Gradescope's standard machines have
# no GPU, so labs are graded on the CPU emulator and speed says "needs GPU".
#
# GRADESCOPE_ROOT (default /autograder) moves the whole layout, and
# GRADE_SETUP_SYSTEM=0 leaves out the packages and the user, for testing
# this script on a machine that is not Gradescope's (the grader's own tests
# run it so).
set -eu
AG=${GRADESCOPE_ROOT:-/autograder}
COURSE=$AG/source/course

if [ "${GRADE_SETUP_SYSTEM:-1}" != 0 ]; then
    bash "$COURSE/common/tools/deps.sh"
    # The grader runs as root so that it can keep student code away from its
    # files; student code itself runs as this user, which owns nothing.
    if ! id -u grader-student >/dev/null 2>&1; then
        useradd --system --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin grader-student
    fi
fi
make -C "$COURSE" --no-print-directory BUILD=build build/bin/grade
# The course libraries, built once here rather than for every submission:
# run_autograder grades in a copy of them (the cache is root's; student code
# never writes to it). A failed build fails the image, where the staff see it.
"$COURSE/build/bin/grade" --root "$COURSE" --prepare --base-cache "$AG/base-cache" \
    ${GRADE_TARGET:+--target "$GRADE_TARGET"}
chmod -R a+rX "$COURSE"
