// The gRPC side of the Listen fan-out's listeners, in C on libnghttp2, for bench/ListenBench (which runs it
// with its writer): CLIENTS connections, each with one Firestore `Listen` stream of one target, as
// ListenBench's grpc-swift listeners open them (one connection each, the request not half-closed). Every
// `document_change` carrying a `sentAt` integer (the writer's stamp, microseconds since 1970) counts one
// delivery, its latency the time it was read less that stamp. It costs a small part of grpc-swift's client's
// CPU a delivery (bench/README.md), so on shared cores the driver leaves the CPU to the server it measures.
//
//   listen_grpc PORT ADMIN_KEY CLIENTS query|doc
//
// Prints `ready` once every stream has had its first CURRENT, then counts deliveries until its standard input
// closes, and prints one JSON line: deliveries, p50 and p99 in milliseconds, and its own CPU time. A stream
// that ends, or a connection that closes, fails the run (exit 1), as in ListenBench.
//
// Build: cc -O2 -o listen_grpc bench/listen_grpc.c -lnghttp2   (Debian: libnghttp2-dev)
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <nghttp2/nghttp2.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <fcntl.h>
#include <arpa/inet.h>

#define DATABASE "projects/bench/databases/(default)"
/// Streams opened but not yet CURRENT at once, as ListenBench opens its listeners 64 at a time.
#define OPENING 64

static void fail(const char *what, const char *detail) {
    fprintf(stderr, "bench failed: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
    exit(1);
}

static int64_t now_micros(void) {
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    return (int64_t)t.tv_sec * 1000000 + t.tv_nsec / 1000;
}

// MARK: protobuf, by hand: the request's few fields out, and the response's few fields in

typedef struct { uint8_t bytes[1024]; size_t n; } buf;

static void put_varint(buf *b, uint64_t v) {
    while (v >= 0x80) { b->bytes[b->n++] = (uint8_t)(v | 0x80); v >>= 7; }
    b->bytes[b->n++] = (uint8_t)v;
}

static void put_bytes(buf *b, int field, const void *p, size_t len) {
    put_varint(b, (uint64_t)field << 3 | 2);
    put_varint(b, len);
    memcpy(b->bytes + b->n, p, len);
    b->n += len;
}

static void put_string(buf *b, int field, const char *s) { put_bytes(b, field, s, strlen(s)); }
static void put_message(buf *b, int field, const buf *m) { put_bytes(b, field, m->bytes, m->n); }
static void put_varint_field(buf *b, int field, uint64_t v) { put_varint(b, (uint64_t)field << 3); put_varint(b, v); }

/// The gRPC message (5-byte prefix and a `ListenRequest`) ListenBench sends: target 1, the query
/// `feed where room == "r1"`, or the document `own/c{k}`.
static buf listen_request(int query, int k) {
    buf target = {0}, request = {0};
    if (query) {
        buf path = {0}, value = {0}, field_filter = {0}, filter = {0}, from = {0}, structured = {0}, query_target = {0};
        put_string(&path, 2, "room");                      // FieldReference.field_path
        put_string(&value, 17, "r1");                      // Value.string_value
        put_message(&field_filter, 1, &path);              // FieldFilter.field
        put_varint_field(&field_filter, 2, 5);             // FieldFilter.op = EQUAL
        put_message(&field_filter, 3, &value);             // FieldFilter.value
        put_message(&filter, 2, &field_filter);            // Filter.field_filter
        put_string(&from, 2, "feed");                      // CollectionSelector.collection_id
        put_message(&structured, 2, &from);                // StructuredQuery.from
        put_message(&structured, 3, &filter);              // StructuredQuery.where
        put_string(&query_target, 1, DATABASE "/documents"); // QueryTarget.parent
        put_message(&query_target, 2, &structured);        // QueryTarget.structured_query
        put_message(&target, 2, &query_target);            // Target.query
    } else {
        char name[256];
        buf documents = {0};
        snprintf(name, sizeof name, DATABASE "/documents/own/c%d", k);
        put_string(&documents, 2, name);                   // DocumentsTarget.documents
        put_message(&target, 3, &documents);               // Target.documents
    }
    put_varint_field(&target, 5, 1);                       // Target.target_id
    put_string(&request, 1, DATABASE);                     // ListenRequest.database
    put_message(&request, 2, &target);                     // ListenRequest.add_target
    buf framed = {0};
    framed.bytes[0] = 0;
    framed.bytes[1] = (uint8_t)(request.n >> 24); framed.bytes[2] = (uint8_t)(request.n >> 16);
    framed.bytes[3] = (uint8_t)(request.n >> 8); framed.bytes[4] = (uint8_t)request.n;
    memcpy(framed.bytes + 5, request.bytes, request.n);
    framed.n = 5 + request.n;
    return framed;
}

/// A cursor over protobuf bytes.
typedef struct { const uint8_t *p, *end; } reader;

static int get_varint(reader *r, uint64_t *v) {
    uint64_t out = 0;
    for (int shift = 0; shift < 64 && r->p < r->end; shift += 7) {
        uint8_t c = *r->p++;
        out |= (uint64_t)(c & 0x7F) << shift;
        if (!(c & 0x80)) { *v = out; return 1; }
    }
    return 0;
}

/// The next field: its number and wire type; for a length-delimited one, `inner` its bytes; for a varint, `v`.
/// Other wire types are skipped over. Answers 0 at the end (or on bytes that are not protobuf).
static int next_field(reader *r, int *field, int *type, reader *inner, uint64_t *v) {
    uint64_t key, len;
    if (r->p >= r->end || !get_varint(r, &key)) return 0;
    *field = (int)(key >> 3);
    *type = (int)(key & 7);
    switch (*type) {
    case 0: return get_varint(r, v);
    case 1: if (r->end - r->p < 8) return 0; r->p += 8; return 1;
    case 5: if (r->end - r->p < 4) return 0; r->p += 4; return 1;
    case 2:
        if (!get_varint(r, &len) || (uint64_t)(r->end - r->p) < len) return 0;
        inner->p = r->p;
        inner->end = r->p + len;
        r->p += len;
        return 1;
    default: return 0;
    }
}

/// The `sentAt` integer of a `Document`'s fields, or 0.
static int64_t sent_at(reader document) {
    int field, type;
    reader entry, inner;
    uint64_t v;
    while (next_field(&document, &field, &type, &entry, &v)) {
        if (field != 2 || type != 2) continue;  // Document.fields: map entries
        int is_key = 0;
        reader value = {0};
        while (next_field(&entry, &field, &type, &inner, &v)) {
            if (field == 1 && type == 2) is_key = inner.end - inner.p == 6 && memcmp(inner.p, "sentAt", 6) == 0;
            if (field == 2 && type == 2) value = inner;
        }
        if (!is_key || !value.p) continue;
        while (next_field(&value, &field, &type, &inner, &v)) {
            if (field == 2 && type == 0) return (int64_t)v;  // Value.integer_value
        }
    }
    return 0;
}

// MARK: latencies

static int64_t *latencies;  // microseconds
static size_t n_latencies, cap_latencies;

static void add_latency(int64_t us) {
    if (n_latencies == cap_latencies) {
        cap_latencies = cap_latencies ? cap_latencies * 2 : 1 << 16;
        latencies = realloc(latencies, cap_latencies * sizeof *latencies);
        if (!latencies) fail("out of memory", NULL);
    }
    latencies[n_latencies++] = us;
}

static int compare(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/// ListenBench's percentile: the sorted sample at index min(n - 1, n * p), in milliseconds.
static double percentile(double p) {
    if (!n_latencies) return -1;
    size_t k = (size_t)((double)n_latencies * p);
    if (k > n_latencies - 1) k = n_latencies - 1;
    return (double)latencies[k] / 1000;
}

// MARK: connections

typedef struct {
    int fd, k;
    nghttp2_session *session;
    int32_t stream;
    buf request;
    size_t request_sent;
    int current;                 // had its first CURRENT
    uint8_t *pending;            // response bytes not yet a whole message
    size_t n_pending, cap_pending;
    int64_t received;            // when the bytes being parsed were read
    int wants_out;               // EPOLLOUT registered
} conn;

static int epfd, port, clients, query_mode, opened, ready, stdin_open = 1;
static const char *key;

static void watch(conn *c, int out) {
    struct epoll_event e = {.events = EPOLLIN | (out ? EPOLLOUT : 0), .data.ptr = c};
    epoll_ctl(epfd, EPOLL_CTL_MOD, c->fd, &e);
    c->wants_out = out;
}

static ssize_t on_send(nghttp2_session *s, const uint8_t *data, size_t len, int flags, void *user) {
    (void)s; (void)flags;
    conn *c = user;
    ssize_t n = send(c->fd, data, len, MSG_NOSIGNAL);
    if (n < 0) {
        if (errno == EAGAIN || errno == EWOULDBLOCK) {
            if (!c->wants_out) watch(c, 1);
            return NGHTTP2_ERR_WOULDBLOCK;
        }
        return NGHTTP2_ERR_CALLBACK_FAILURE;
    }
    return n;
}

/// The request's one message, then nothing more: the stream stays open (not half-closed), as a client's does.
static ssize_t on_request_body(nghttp2_session *s, int32_t stream, uint8_t *out, size_t len, uint32_t *flags,
                               nghttp2_data_source *source, void *user) {
    (void)s; (void)stream; (void)flags; (void)source;
    conn *c = user;
    size_t left = c->request.n - c->request_sent;
    if (!left) return NGHTTP2_ERR_DEFERRED;
    if (len > left) len = left;
    memcpy(out, c->request.bytes + c->request_sent, len);
    c->request_sent += len;
    return (ssize_t)len;
}

static void on_message(conn *c, const uint8_t *p, size_t len) {
    reader r = {p, p + len}, inner, deeper;
    int field, type;
    uint64_t v;
    while (next_field(&r, &field, &type, &inner, &v)) {
        if (field == 3 && type == 2) {  // ListenResponse.document_change
            while (next_field(&inner, &field, &type, &deeper, &v)) {
                if (field == 1 && type == 2) {  // DocumentChange.document
                    int64_t sent = sent_at(deeper);
                    if (sent > 0) add_latency(c->received - sent);
                }
            }
        } else if (field == 2 && type == 2 && !c->current) {  // ListenResponse.target_change
            while (next_field(&inner, &field, &type, &deeper, &v)) {
                if (field == 1 && type == 0 && v == 3) {  // TargetChange.target_change_type = CURRENT
                    c->current = 1;
                    ready++;
                }
            }
        }
    }
}

static int on_data(nghttp2_session *s, uint8_t flags, int32_t stream, const uint8_t *data, size_t len, void *user) {
    (void)s; (void)flags; (void)stream;
    conn *c = user;
    if (c->n_pending + len > c->cap_pending) {
        c->cap_pending = (c->n_pending + len) * 2;
        c->pending = realloc(c->pending, c->cap_pending);
        if (!c->pending) fail("out of memory", NULL);
    }
    memcpy(c->pending + c->n_pending, data, len);
    c->n_pending += len;
    size_t at = 0;
    while (c->n_pending - at >= 5) {
        const uint8_t *m = c->pending + at;
        size_t n = (size_t)m[1] << 24 | (size_t)m[2] << 16 | (size_t)m[3] << 8 | m[4];
        if (m[0]) fail("a compressed Listen response", NULL);
        if (c->n_pending - at - 5 < n) break;
        on_message(c, m + 5, n);
        at += 5 + n;
    }
    memmove(c->pending, c->pending + at, c->n_pending - at);
    c->n_pending -= at;
    return 0;
}

static int on_header(nghttp2_session *s, const nghttp2_frame *frame, const uint8_t *name, size_t namelen,
                     const uint8_t *value, size_t valuelen, uint8_t flags, void *user) {
    (void)s; (void)flags; (void)user;
    (void)frame;
    // A status (in trailers, or a trailers-only answer) means the server ended the stream: a failure, whatever it is.
    if (namelen == 11 && memcmp(name, "grpc-status", 11) == 0) {
        char detail[128];
        snprintf(detail, sizeof detail, "grpc-status %.*s", (int)valuelen, value);
        fail("a Listen stream ended", detail);
    }
    return 0;
}

static int on_close(nghttp2_session *s, int32_t stream, uint32_t error, void *user) {
    (void)s; (void)stream; (void)user;
    char detail[64];
    snprintf(detail, sizeof detail, "HTTP/2 error %u", error);
    fail("a Listen stream ended", detail);
    return 0;
}

static nghttp2_session_callbacks *callbacks;

static void flush(conn *c) {
    if (nghttp2_session_send(c->session) != 0) fail("a connection failed to send", NULL);
    if (c->wants_out && !nghttp2_session_want_write(c->session)) watch(c, 0);
}

static void open_one(conn *c, int k) {
    struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    c->k = k;
    c->fd = socket(AF_INET, SOCK_STREAM, 0);
    if (c->fd < 0) fail("socket", strerror(errno));
    int one = 1;
    setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    // Connected blocking (loopback answers at once), then non-blocking for the loop.
    if (connect(c->fd, (struct sockaddr *)&to, sizeof to) < 0) fail("connect", strerror(errno));
    fcntl(c->fd, F_SETFL, fcntl(c->fd, F_GETFL) | O_NONBLOCK);
    struct epoll_event e = {.events = EPOLLIN, .data.ptr = c};
    epoll_ctl(epfd, EPOLL_CTL_ADD, c->fd, &e);

    nghttp2_session_client_new(&c->session, callbacks, c);
    nghttp2_settings_entry settings[] = {{NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, 1 << 20}};
    nghttp2_submit_settings(c->session, NGHTTP2_FLAG_NONE, settings, 1);
    nghttp2_session_set_local_window_size(c->session, NGHTTP2_FLAG_NONE, 0, 1 << 24);

    char authority[32], authorization[256];
    snprintf(authority, sizeof authority, "127.0.0.1:%d", port);
    snprintf(authorization, sizeof authorization, "Bearer %s", key);
#define HEADER(n, v) {(uint8_t *)(n), (uint8_t *)(v), sizeof(n) - 1, strlen(v), NGHTTP2_NV_FLAG_NONE}
    nghttp2_nv headers[] = {
        HEADER(":method", "POST"), HEADER(":scheme", "http"),
        HEADER(":path", "/google.firestore.v1.Firestore/Listen"), HEADER(":authority", authority),
        HEADER("content-type", "application/grpc"), HEADER("te", "trailers"),
        HEADER("authorization", authorization),
    };
    c->request = listen_request(query_mode, k);
    nghttp2_data_provider body = {.read_callback = on_request_body};
    c->stream = nghttp2_submit_request(c->session, NULL, headers, sizeof headers / sizeof *headers, &body, c);
    if (c->stream < 0) fail("submit", nghttp2_strerror(c->stream));
    flush(c);
    opened++;
}

static void on_readable(conn *c) {
    uint8_t bytes[65536];
    for (;;) {
        ssize_t n = recv(c->fd, bytes, sizeof bytes, 0);
        if (n == 0) fail("a connection closed", NULL);
        if (n < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK) break;
            fail("recv", strerror(errno));
        }
        c->received = now_micros();
        ssize_t used = nghttp2_session_mem_recv(c->session, bytes, (size_t)n);
        if (used < 0) fail("HTTP/2", nghttp2_strerror((int)used));
        if ((size_t)n < sizeof bytes) break;
    }
    flush(c);
}

static double cpu_seconds(void) {
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return (double)(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + (double)(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

int main(int argc, char **argv) {
    if (argc != 5 || atoi(argv[1]) <= 0 || atoi(argv[3]) < 0 || (strcmp(argv[4], "query") && strcmp(argv[4], "doc"))) {
        fprintf(stderr, "usage: listen_grpc PORT ADMIN_KEY CLIENTS query|doc\n");
        return 2;
    }
    port = atoi(argv[1]);
    key = argv[2];
    clients = atoi(argv[3]);
    query_mode = strcmp(argv[4], "query") == 0;

    nghttp2_session_callbacks_new(&callbacks);
    nghttp2_session_callbacks_set_send_callback(callbacks, on_send);
    nghttp2_session_callbacks_set_on_data_chunk_recv_callback(callbacks, on_data);
    nghttp2_session_callbacks_set_on_header_callback(callbacks, on_header);
    nghttp2_session_callbacks_set_on_stream_close_callback(callbacks, on_close);

    epfd = epoll_create1(0);
    conn *conns = calloc((size_t)clients + 1, sizeof *conns);
    struct epoll_event in = {.events = EPOLLIN, .data.ptr = NULL};  // NULL: standard input
    epoll_ctl(epfd, EPOLL_CTL_ADD, 0, &in);

    int said_ready = 0;
    struct epoll_event events[256];
    while (stdin_open || !said_ready) {
        while (opened < clients && opened - ready < OPENING) open_one(&conns[opened], opened);
        if (!said_ready && ready == clients) {
            printf("ready\n");
            fflush(stdout);
            said_ready = 1;
        }
        int n = epoll_wait(epfd, events, 256, -1);
        if (n < 0 && errno != EINTR) fail("epoll_wait", strerror(errno));
        for (int i = 0; i < n; i++) {
            conn *c = events[i].data.ptr;
            if (!c) {
                char scratch[256];
                if (read(0, scratch, sizeof scratch) <= 0) {
                    stdin_open = 0;
                    epoll_ctl(epfd, EPOLL_CTL_DEL, 0, NULL);
                }
                continue;
            }
            if (events[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR)) on_readable(c);
            if (events[i].events & EPOLLOUT) flush(c);
        }
        if (!stdin_open && !said_ready) fail("standard input closed before every stream was current", NULL);
    }
    qsort(latencies, n_latencies, sizeof *latencies, compare);
    printf("{\"samples\": %zu, \"p50_ms\": %.3f, \"p99_ms\": %.3f, \"driver_cpu_s\": %.3f}\n", n_latencies,
           percentile(0.5), percentile(0.99), cpu_seconds());
    return 0;
}
