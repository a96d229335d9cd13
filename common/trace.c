/*
 * Chrome trace-event writer (see trace.h). Events are streamed as they come,
 * so a long run never holds its whole timeline in memory; the file is
 * {"traceEvents":[ ... ],"displayTimeUnit":"ms"} with one event per line.
 */
#include "trace.h"
#include "json.h"
#include "memory.h"
#include "timer.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct trace {
    FILE *f;
    int pid;
    int first; /* no comma before the first event */
    int warned; /* said once that events with a time that is not a number were left out */
};

/* JSON has no NaN or Inf: printf's "nan" would make the whole file unreadable to the viewer.
 * A time that is not finite is a bug in the caller's clock arithmetic, and there is no place
 * on a timeline to draw the event, so it is left out, and the first one is reported. */
static int times_finite(trace_t *t, const char *name, double ts_us, double dur_us) {
    if (isfinite(ts_us) && isfinite(dur_us)) return 1;
    if (!t->warned)
        fprintf(stderr, "trace: warning: event '%s' has a time that is not a finite number (ts %g us, "
                "dur %g us); it and any later such events are left out of the trace\n", name ? name : "",
                ts_us, dur_us);
    t->warned = 1;
    return 0;
}

static void begin_event(trace_t *t) {
    fputs(t->first ? "\n" : ",\n", t->f);
    t->first = 0;
}

trace_t *trace_open(const char *path, int pid, const char *process_name) {
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "trace: cannot create '%s': %s; check the directory exists and is writable\n",
                path, strerror(errno));
        return NULL;
    }
    trace_t *t = host_malloc(sizeof *t);
    t->f = f;
    t->pid = pid;
    t->first = 1;
    t->warned = 0;
    fputs("{\"traceEvents\":[", f);
    if (process_name) {
        begin_event(t);
        fprintf(f, "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%d,\"tid\":0,\"args\":{\"name\":", pid);
        course_json_string(f, process_name);
        fputs("}}", f);
        begin_event(t);
        /* Sort rows by rank in the viewer. */
        fprintf(f, "{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":%d,\"tid\":0,"
                   "\"args\":{\"sort_index\":%d}}", pid, pid);
    }
    return t;
}

void trace_thread_name(trace_t *t, int tid, const char *name) {
    if (!t) return;
    begin_event(t);
    fprintf(t->f, "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%d,\"tid\":%d,\"args\":{\"name\":",
            t->pid, tid);
    course_json_string(t->f, name);
    fputs("}}", t->f);
}

void trace_complete(trace_t *t, const char *name, const char *cat, int tid, double ts_us,
                    double dur_us) {
    if (!t || !times_finite(t, name, ts_us, dur_us)) return;
    begin_event(t);
    fputs("{\"ph\":\"X\",\"name\":", t->f);
    course_json_string(t->f, name);
    fputs(",\"cat\":", t->f);
    course_json_string(t->f, cat ? cat : "");
    fprintf(t->f, ",\"pid\":%d,\"tid\":%d,\"ts\":%.3f,\"dur\":%.3f}", t->pid, tid, ts_us, dur_us);
}

void trace_instant(trace_t *t, const char *name, int tid, double ts_us) {
    if (!t || !times_finite(t, name, ts_us, 0)) return;
    begin_event(t);
    fputs("{\"ph\":\"i\",\"s\":\"t\",\"name\":", t->f);
    course_json_string(t->f, name);
    fprintf(t->f, ",\"pid\":%d,\"tid\":%d,\"ts\":%.3f}", t->pid, tid, ts_us);
}

void trace_counter(trace_t *t, const char *name, double ts_us, double value) {
    if (!t || !times_finite(t, name, ts_us, 0)) return;
    begin_event(t);
    fputs("{\"ph\":\"C\",\"name\":", t->f);
    course_json_string(t->f, name);
    /* JSON has no NaN or Inf (printf writes "nan", "-inf"): a diverged loss
     * is written as null, which Perfetto shows as a gap, not a broken file. */
    fprintf(t->f, ",\"pid\":%d,\"tid\":0,\"ts\":%.3f,\"args\":{\"value\":", t->pid, ts_us);
    if (isfinite(value)) fprintf(t->f, "%.17g}}", value);
    else fputs("null}}", t->f);
}

double trace_now_us(void) {
    static double t0 = -1.0;
    double now = wall_time();
    if (t0 < 0) t0 = now;
    return (now - t0) * 1e6;
}

int trace_close(trace_t *t) {
    if (!t) return 0;
    fputs("\n],\"displayTimeUnit\":\"ms\"}\n", t->f);
    int bad = ferror(t->f);
    bad |= fclose(t->f) != 0;
    host_free(t);
    if (bad) fprintf(stderr, "trace: writing the trace failed (disk full?)\n");
    return bad ? -1 : 0;
}

int trace_merge(const char *out_path, const char *const *in_paths, int n) {
    FILE *out = fopen(out_path, "w");
    if (!out) {
        fprintf(stderr, "trace: cannot create '%s': %s\n", out_path, strerror(errno));
        return -1;
    }
    fputs("{\"traceEvents\":[", out);
    int first = 1, rc = 0;
    for (int i = 0; i < n && rc == 0; i++) {
        FILE *in = fopen(in_paths[i], "r");
        if (!in) {
            fprintf(stderr, "trace: cannot read '%s': %s\n", in_paths[i], strerror(errno));
            rc = -1;
            break;
        }
        /* Our own files hold one event per line between the header and footer
         * lines; a line may be of any length (an event's name is the caller's).
         * A rank killed while writing (MPI_Abort ends them all) leaves its last
         * line cut and no footer: each event line is checked to be a whole
         * JSON object, and one that is not is left out, so that the merged
         * file still opens, with the events that were complete. */
        char *line = NULL;
        size_t cap = 0;
        ssize_t got;
        long lineno = 0, first_bad = 0, n_bad = 0;
        int closed = 0;
        while ((got = getline(&line, &cap, in)) >= 0) {
            size_t len = (size_t)got;
            lineno++;
            while (len && (line[len - 1] == '\n' || line[len - 1] == '\r' || line[len - 1] == ',')) line[--len] = '\0';
            if (lineno == 1) {
                if (len == 16 && !memcmp(line, "{\"traceEvents\":[", 16)) continue;
                fprintf(stderr, "trace: '%s' is not a trace file (it does not begin with {\"traceEvents\":[ on a "
                        "line of its own); give the files that trace_open wrote\n", in_paths[i]);
                rc = -1;
                break;
            }
            if (!strcmp(line, "],\"displayTimeUnit\":\"ms\"}")) closed = 1;
            if (len == 0 || line[0] != '{') continue;
            if (!course_json_valid(line, len)) {
                if (!n_bad++) first_bad = lineno;
                continue;
            }
            fputs(first ? "\n" : ",\n", out);
            fwrite(line, 1, len, out);
            first = 0;
        }
        const int read_errno = errno; /* getline's, before free and fprintf can change it */
        free(line);
        /* A read error first: a directory opens but reads nothing, and is not
         * "empty" in the sense of a rank that stopped before trace_open. */
        if (ferror(in)) {
            fprintf(stderr, "trace: reading '%s' failed: %s\n", in_paths[i], strerror(read_errno));
            rc = -1;
        }
        if (rc == 0 && lineno == 0) {
            fprintf(stderr, "trace: '%s' is empty (did its rank stop before trace_open?); leave it out of the "
                    "merge\n", in_paths[i]);
            rc = -1;
        }
        if (rc == 0 && n_bad)
            fprintf(stderr, "trace: warning: '%s': left out %ld line%s that %s not a complete event (line %ld "
                    "first)%s\n", in_paths[i], n_bad, n_bad == 1 ? "" : "s", n_bad == 1 ? "is" : "are", first_bad,
                    closed ? "" : "; the file has no closing line, so its rank stopped before trace_close");
        fclose(in);
    }
    fputs("\n],\"displayTimeUnit\":\"ms\"}\n", out);
    /* As in trace_close: a write that failed on the way, or the last flush;
     * either way the merged file is cut short and the caller must be told why. */
    int bad = ferror(out);
    bad |= fclose(out) != 0;
    if (bad) {
        fprintf(stderr, "trace: writing '%s' failed (disk full?)\n", out_path);
        rc = -1;
    }
    return rc;
}
