/** @file
 * Timelines as Chrome trace-event JSON, viewable in Perfetto (ui.perfetto.dev)
 * or chrome://tracing.
 *
 * The distributed labs use it to show what each rank did when: a forward pass
 * on one row, the all-reduce that overlaps it on another, the pipeline bubble
 * as empty space. Each rank writes its own file with pid = rank, and
 * trace_merge() joins the files into one timeline with a row per rank.
 * Times are microseconds, as the format expects.
 */
#ifndef COURSE_TRACE_H
#define COURSE_TRACE_H

#ifdef __cplusplus
extern "C" {
#endif

/** An open trace file. */
typedef struct trace trace_t;

/**
 * @brief Create a trace file; its events are stamped with pid (use the rank).
 * @param path file to write (overwritten)
 * @param pid process id shown in the viewer, normally the MPI rank
 * @param process_name label for that row, e.g. "rank 0"
 * @return the trace, or NULL (with a message on stderr) if the file cannot be created
 */
trace_t *trace_open(const char *path, int pid, const char *process_name);

/**
 * @brief Name a thread row (tid), e.g. "compute" or "comm".
 * @param t the trace (may be NULL)
 * @param tid thread id within the process
 * @param name label
 */
void trace_thread_name(trace_t *t, int tid, const char *name);

/**
 * @brief A complete event ("ph":"X"): something that started at ts_us and took dur_us.
 * @param t the trace (NULL is allowed and does nothing, so tracing can be switched off)
 * @param name event name
 * @param cat category, e.g. "compute", "comm"
 * @param tid thread row
 * @param ts_us start time in microseconds
 * @param dur_us duration in microseconds
 *
 * An event whose ts_us or dur_us is NaN or infinite (JSON cannot hold it) is left out, and
 * the first such event of a trace is reported on stderr; the same holds for the times of
 * trace_instant() and trace_counter().
 */
void trace_complete(trace_t *t, const char *name, const char *cat, int tid, double ts_us,
                    double dur_us);

/**
 * @brief An instant event ("ph":"i"), e.g. a step boundary.
 * @param t the trace (may be NULL)
 * @param name event name
 * @param tid thread row
 * @param ts_us time in microseconds
 */
void trace_instant(trace_t *t, const char *name, int tid, double ts_us);

/**
 * @brief A counter sample ("ph":"C"), e.g. memory in use, drawn as a graph.
 * @param t the trace (may be NULL)
 * @param name counter name
 * @param ts_us time in microseconds
 * @param value the value
 */
void trace_counter(trace_t *t, const char *name, double ts_us, double value);

/**
 * @brief Microseconds since the first call in this process (a shared zero for one rank's events).
 * @return the time in microseconds
 */
double trace_now_us(void);

/**
 * @brief Finish the JSON and close the file. NULL is allowed.
 * @param t the trace
 * @return 0 on success, -1 if writing failed (disk full, ...)
 */
int trace_close(trace_t *t);

/**
 * @brief Merge several closed trace files into one (e.g. one per rank).
 *
 * Each event line is checked to be a whole JSON object: a line that is not
 * (the last line of a rank killed while writing it) is left out with a
 * warning on stderr, so the merged file always opens in the viewer.
 * @param out_path merged file to write
 * @param in_paths files written by trace_open/trace_close
 * @param n how many
 * @return 0 on success, -1 with a message on stderr (a file that cannot be
 *         read, is empty, or does not begin as trace_open() begins a file;
 *         or the merged file could not be written whole)
 */
int trace_merge(const char *out_path, const char *const *in_paths, int n);

#ifdef __cplusplus
}
#endif
#endif /* COURSE_TRACE_H */
