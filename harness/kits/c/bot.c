/* {{name}}: a card-league bot in C, no libraries (written by `league new`).
 *
 * It speaks the protocol in JSON lines (`protocol = "json"` in bot.toml): the
 * harness writes one JSON object a line, and reads one back. stdout carries
 * replies only; stderr is your debug log. It plays every game legally with
 * the simplest rule that is not always the same move: a random legal action,
 * from a generator seeded per match (the same match, the same moves). Make it
 * play well in choose(); the json_* helpers below walk a message.
 *
 * Build: league build bot.toml (it runs the manifest's build step:
 * gcc -O2 -o bot bot.c); league check bot.toml builds, then checks. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- a little JSON: pointers into the line, no copies, no allocation ---- */

static const char *skip_space(const char *p) {
    while (p && (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n'))
        p++;
    return p;
}

/* Just past the JSON value that starts at p, or NULL if the text ends first. */
static const char *json_skip(const char *p) {
    int depth = 0;
    p = skip_space(p);
    if (!p || !*p)
        return NULL;
    do {
        if (*p == '"') {
            for (p++; *p && *p != '"'; p++)
                if (*p == '\\' && p[1])
                    p++;
            if (!*p)
                return NULL;
        } else if (*p == '{' || *p == '[') {
            depth++;
        } else if (*p == '}' || *p == ']') {
            depth--;
        } else if (depth == 0) { /* a number, true, false, null */
            while (*p && !strchr(",]}: \t\r\n", *p))
                p++;
            return p;
        }
        if (!*p)
            return NULL;
        p++;
    } while (depth > 0);
    return p;
}

/* The value of `key` in the object that starts at obj (its own keys only,
 * not those of objects inside it), or NULL. */
static const char *json_get(const char *obj, const char *key) {
    size_t length = strlen(key);
    const char *p = skip_space(obj);
    if (!p || *p != '{')
        return NULL;
    p = skip_space(p + 1);
    while (p && *p == '"') {
        const char *name = p + 1, *end = json_skip(p);
        if (!end)
            return NULL;
        const char *value = skip_space(skip_space(end) + 1); /* past ':' */
        if ((size_t)(end - 1 - name) == length && memcmp(name, key, length) == 0)
            return value;
        p = skip_space(json_skip(value));
        if (p && *p == ',')
            p = skip_space(p + 1);
    }
    return NULL;
}

/* The number of items of the array that starts at arr (0 if it is not one). */
static long json_len(const char *arr) {
    long count = 0;
    const char *p = skip_space(arr);
    if (!p || *p != '[')
        return 0;
    p = skip_space(p + 1);
    while (p && *p && *p != ']') {
        count++;
        p = skip_space(json_skip(p));
        if (p && *p == ',')
            p = skip_space(p + 1);
    }
    return count;
}

/* The index-th item of the array at arr, or NULL. */
static const char *json_item(const char *arr, long index) {
    const char *p = skip_space(arr);
    if (!p || *p != '[')
        return NULL;
    p = skip_space(p + 1);
    for (long i = 0; p && *p && *p != ']'; i++) {
        if (i == index)
            return p;
        p = skip_space(json_skip(p));
        if (p && *p == ',')
            p = skip_space(p + 1);
    }
    return NULL;
}

static long json_int(const char *value, long otherwise) {
    return value && (*value == '-' || (*value >= '0' && *value <= '9'))
               ? strtol(value, NULL, 10) : otherwise;
}

/* Whether the value at value is the JSON string `text` (no escapes in it). */
static int json_is(const char *value, const char *text) {
    size_t length = strlen(text);
    return value && value[0] == '"' && strncmp(value + 1, text, length) == 0 &&
           value[length + 1] == '"';
}

/* ---- the bot ----------------------------------------------------------------- */

static uint64_t rng = 1; /* xorshift64, reseeded at each match's start */

static uint64_t next_random(void) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* The index of the chosen action in legal (never empty). obs is what this
 * seat may know now: json_get(obs, "seat"), ...; the game pages in games/
 * say what each game's obs and legal hold. */
static long choose(const char *obs, const char *legal, long time_left_ms) {
    long count = json_len(legal);
    (void)obs;
    (void)time_left_ms;
    if (count <= 1)
        return 0; /* a forced move */
    return (long)(next_random() % (uint64_t)count);
}

static void start_match(const char *message) {
    const char *id = json_get(message, "match_id"), *end = json_skip(id);
    rng = 1469598103934665603ULL ^ (uint64_t)json_int(json_get(message, "seat"), 0);
    for (const char *p = id; p && p < end; p++) /* FNV-1a over the match's id */
        rng = (rng ^ (unsigned char)*p) * 1099511628211ULL;
    if (!rng)
        rng = 1;
}

int main(void) {
    char *line = NULL;
    size_t capacity = 0;
    while (getline(&line, &capacity, stdin) != -1) {
        const char *type = json_get(line, "type");
        if (json_is(type, "hello")) {
            printf("{\"type\":\"hello\",\"protocol\":1,\"name\":\"{{name}}\"}\n");
        } else if (json_is(type, "act")) {
            long decision = json_int(json_get(line, "decision"), 0);
            long index = choose(json_get(line, "obs"), json_get(line, "legal"),
                                json_int(json_get(line, "time_left_ms"), 0));
            /* echo the decision: a late reply can never answer a later question */
            printf("{\"type\":\"action\",\"index\":%ld,\"decision\":%ld}\n", index, decision);
        } else if (json_is(type, "start")) {
            start_match(line);
            continue;
        } else if (json_is(type, "end")) {
            fprintf(stderr, "match over: rank %ld\n",
                    json_int(json_item(json_get(line, "ranks"),
                                       json_int(json_get(line, "seat"), 0)), 0));
            continue;
        } else if (json_is(type, "quit")) {
            break;
        } else {
            continue; /* anything new: no reply */
        }
        fflush(stdout); /* a reply must leave at once */
    }
    free(line);
    return 0;
}
