/*
 * libFuzzer harness: how the grader reads the verdict channel of a test on
 * several MPI ranks (channel_read in autograder/src/sandbox.c). Each rank's
 * harness connects, sends "HELLO <rank>\n", gets the token back, and sends
 * its report; student code runs in those processes and can send any bytes.
 *
 * Feeds: byte 0 gives the number of ranks (1 to 4) and of connections (1 to
 * 4); then pieces, each a byte naming the connection, a byte giving a length
 * and that many bytes (a length of 0 ends the connection, as a rank that
 * exits). Each connection is one end of a socketpair, set up as
 * channel_accept() sets up one it accepted; each piece is written to the
 * other end, then channel_read() reads it, as the sandbox does when poll()
 * says the connection is readable.
 * Asserts: no crash, sanitizer report or hang; no two connections hold one
 * rank, and ranks_heard counts those that hold one; a connection that holds
 * a rank got the token back, sent as its first line a hello that names that
 * rank (read here by hand: a number past an int names none), and that rank's
 * report is exactly the bytes it sent after that line; one that was
 * refused got nothing and left a one-line problem; and what a connection
 * sent is read the same whichever pieces it came in: the same bytes in one
 * piece, on a connection of its own, give it the same rank and report (or,
 * where it was refused as a second claim to a rank, that rank).
 *
 * sandbox.c's reader is static, so it is included whole.
 */
#include "sandbox.c"

#include <stdint.h>

#define TOKEN "0123456789abcdef0123456789abcdef"
#define NCONN 4

typedef struct {
    int peer;                /* the rank's end */
    char meant[1 << 16];     /* what the rank sent before it ended */
    size_t nmeant;
    int ended;
    char sent[1 << 16];      /* what of it came while the grader's end was open */
    size_t nsent;
    int refused;             /* the grader closed its end before the rank ended */
} rank_end_t;

static rank_end_t ends[NCONN];

/* Send a piece on a connection (n = 0: the rank ends) and let the grader read it. */
static void piece(conn_t *c, rank_end_t *e, conn_t *all, int nc, int ranks, sandbox_result_t *res, size_t *len,
                  size_t *cap, const uint8_t *p, size_t n)
{
    if (e->ended) return;
    if (n == 0) {
        e->ended = 1;
        shutdown(e->peer, SHUT_WR); /* the token, if it came, stays to be read */
    } else {
        memcpy(e->meant + e->nmeant, p, n);
        e->nmeant += n;
    }
    if (c->fd < 0) return; /* refused: what the rank sends goes nowhere */
    if (n > 0) {
        if (send(e->peer, p, n, MSG_NOSIGNAL) != (ssize_t)n) abort();
        memcpy(e->sent + e->nsent, p, n);
        e->nsent += n;
    }
    channel_read(c, all, nc, ranks, TOKEN, res, len, cap);
    if (c->fd < 0 && n > 0) e->refused = 1;
    if (n == 0 && c->fd >= 0) abort(); /* the end of a connection closes it */
}

static void open_conn(conn_t *c, rank_end_t *e, int i)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) abort();
    memset(c, 0, sizeof *c);
    c->fd = sv[0];
    c->rank = -1;
    c->pid = 1000 + i; /* one process each */
    e->peer = sv[1];
    e->nmeant = e->nsent = 0;
    e->ended = e->refused = 0;
}

/* What the rank's end received: the token line, or nothing. */
static size_t received(int fd, char *buf, size_t cap)
{
    size_t n = 0;
    for (;;) {
        ssize_t r = recv(fd, buf + n, cap - n, MSG_DONTWAIT);
        if (r <= 0) return n;
        n += (size_t)r;
    }
}

/* The rank a hello line [s, end) names, read by hand: "HELLO", blanks, a sign
 * and digits, then nothing (a NUL byte anywhere in the line makes it name
 * none); -2 when it names none, and numbers past any rank are -3, not cut to
 * an int. */
static long hello_rank(const char *s, const char *end)
{
    if (memchr(s, 0, (size_t)(end - s))) return -2;
    if (end - s < 5 || memcmp(s, "HELLO", 5)) return -2;
    s += 5;
    while (s < end && (*s == ' ' || (*s >= '\t' && *s <= '\r'))) s++;
    int neg = s < end && *s == '-';
    s += s < end && (*s == '-' || *s == '+');
    if (s == end || *s < '0' || *s > '9') return -2;
    long v = 0;
    for (; s < end && *s >= '0' && *s <= '9'; s++) v = v > 1000000 ? v : v * 10 + (*s - '0');
    if (s != end) return -2;
    return v > 1000000 ? -3 : neg ? -v : v;
}

static void check_one_line(const sandbox_result_t *res)
{
    const char *z = memchr(res->channel_problem, 0, sizeof res->channel_problem);
    if (!z || strchr(res->channel_problem, '\n')) abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > 60000) return 0; /* each rank's bytes fit its buffers */
    const int ranks = 1 + (data[0] & 3), nc = 1 + ((data[0] >> 2) & 3);
    sandbox_result_t res;
    memset(&res, 0, sizeof res);
    size_t len[GRADE_MAX_RANKS] = {0}, cap[GRADE_MAX_RANKS] = {0};
    conn_t conns[NCONN];
    for (int i = 0; i < nc; i++) open_conn(&conns[i], &ends[i], i);

    for (size_t at = 1; at + 2 <= size;) {
        int i = data[at] % nc;
        size_t n = data[at + 1];
        at += 2;
        if (n > size - at) n = size - at;
        piece(&conns[i], &ends[i], conns, nc, ranks, &res, len, cap, data + at, n);
        at += n;
    }
    for (int i = 0; i < nc; i++) piece(&conns[i], &ends[i], conns, nc, ranks, &res, len, cap, NULL, 0);

    check_one_line(&res);
    int heard = 0, holder[GRADE_MAX_RANKS];
    for (int r = 0; r < GRADE_MAX_RANKS; r++) holder[r] = -1;
    for (int i = 0; i < nc; i++) {
        const conn_t *c = &conns[i];
        const rank_end_t *e = &ends[i];
        char back[256];
        size_t nb = received(e->peer, back, sizeof back);
        if (c->rank < 0) {
            if (nb != 0) abort();                        /* no token for a connection with no rank */
            if (e->refused && !res.channel_problem[0]) abort(); /* refused, and said why */
            continue;
        }
        if (c->rank >= ranks || holder[c->rank] >= 0) abort();
        holder[c->rank] = i;
        heard++;
        if (nb != strlen(TOKEN) + 1 || memcmp(back, TOKEN "\n", nb)) abort();
        const char *nl = memchr(e->sent, '\n', e->nsent);
        if (!nl || nl - e->sent >= (ptrdiff_t)sizeof c->hello || hello_rank(e->sent, nl) != c->rank) {
            fprintf(stderr, "connection %d holds rank %d after the hello '%.*s'\n", i, c->rank, (int)(nl ? nl - e->sent : 0),
                    e->sent);
            abort();
        }
        size_t after = e->nsent - (size_t)(nl + 1 - e->sent);
        const char *rep = res.rank_report[c->rank];
        if (len[c->rank] != after || (after && (!rep || memcmp(rep, nl + 1, after) || rep[after]))) abort();
    }
    if (heard != res.ranks_heard) abort();
    for (int r = 0; r < GRADE_MAX_RANKS; r++)
        if (holder[r] < 0 && len[r] != 0) abort();

    /* Each connection's bytes again, in one piece, on a connection of its own. */
    for (int i = 0; i < nc; i++) {
        if (!ends[i].nmeant) continue;
        sandbox_result_t one;
        memset(&one, 0, sizeof one);
        size_t l1[GRADE_MAX_RANKS] = {0}, c1[GRADE_MAX_RANKS] = {0};
        static rank_end_t e;
        conn_t c;
        open_conn(&c, &e, 0);
        piece(&c, &e, &c, 1, ranks, &one, l1, c1, (const uint8_t *)ends[i].meant, ends[i].nmeant);
        piece(&c, &e, &c, 1, ranks, &one, l1, c1, NULL, 0);
        check_one_line(&one);
        close(e.peer);
        int r = conns[i].rank;
        if (r >= 0) {
            if (c.rank != r || l1[r] != len[r] || (len[r] && memcmp(one.rank_report[r], res.rank_report[r], len[r]))) {
                fprintf(stderr, "connection %d: rank %d and %zu bytes of report in pieces, rank %d and %zu in one\n",
                        i, r, len[r], c.rank, c.rank >= 0 ? l1[c.rank] : 0);
                abort();
            }
        } else if (c.rank >= 0 && holder[c.rank] < 0) {
            fprintf(stderr, "connection %d: no rank in pieces, rank %d in one piece\n", i, c.rank);
            abort();
        } else if (c.rank < 0 && (ends[i].refused ? !one.channel_problem[0] : one.channel_problem[0] && !res.channel_problem[0])) {
            fprintf(stderr, "connection %d: %s in pieces, %s in one piece\n", i,
                    ends[i].refused ? "refused" : "no problem", one.channel_problem[0] ? "refused" : "no problem");
            abort();
        }
        sandbox_result_free(&one);
    }

    for (int i = 0; i < nc; i++) {
        if (conns[i].fd >= 0) close(conns[i].fd);
        close(ends[i].peer);
    }
    sandbox_result_free(&res);
    return 0;
}
