/** @file
 * What a student's lab function returns.
 *
 * Starter code compiles and runs, and its unfinished functions return
 * LAB_NOT_IMPLEMENTED, so a check (and the grader) can say "not started"
 * instead of reporting wrong numbers or crashing on an empty kernel.
 */
#ifndef COURSE_LAB_H
#define COURSE_LAB_H

/** Status codes of the functions students write. */
typedef enum {
    LAB_OK = 0,              /**< done, results are in the output buffers */
    LAB_NOT_IMPLEMENTED = 1, /**< the TODO is still there */
    LAB_BAD_ARGUMENT = 2,    /**< sizes or pointers the function cannot handle */
    LAB_LAUNCH_FAILED = 3,   /**< a kernel launch returned an error */
    LAB_NEEDS_HOPPER = 4,    /**< the code needs a compute-capability 9.0 GPU and an sm_90a build (wgmma, TMA), or the emulator; not run here */
} lab_status_t;

/**
 * @brief A short name for a status, for messages.
 * @param s the status
 * @return "ok", "not implemented", ...
 */
static inline const char *lab_status_name(int s) {
    switch (s) {
    case LAB_OK: return "ok";
    case LAB_NOT_IMPLEMENTED: return "not implemented";
    case LAB_BAD_ARGUMENT: return "bad argument";
    case LAB_LAUNCH_FAILED: return "launch failed";
    case LAB_NEEDS_HOPPER: return "needs a Hopper GPU";
    default: return "unknown status";
    }
}

#endif /* COURSE_LAB_H */
