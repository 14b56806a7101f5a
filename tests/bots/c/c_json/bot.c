/* A card-league bot in C with no library at all: it speaks the JSON-lines
 * encoding (PROTOCOL.md, "Framing"). Each message from the harness is one
 * JSON object on one line, in plain ASCII; this bot finds the top-level
 * "type", "decision" and the length of "legal" with a tiny scanner and
 * answers index 0, or a random legal index when run as `./bot random`.
 * Debug output goes to stderr: stdout carries replies only.
 *
 * Build: make (or: cc -O2 -o bot bot.c) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The end of the JSON string whose opening quote is at p (its closing quote),
 * or NULL if the line ends first. */
static const char *string_end(const char *p) {
    for (p++; *p && *p != '"'; p++)
        if (*p == '\\' && p[1])
            p++;
    return *p ? p : NULL;
}

/* Where the value of the top-level key `key` starts in the object `line`,
 * or NULL: keys inside obs never match, whatever they are called. */
static const char *find_key(const char *line, const char *key) {
    size_t length = strlen(key);
    int depth = 0;
    for (const char *p = line; *p; p++) {
        if (*p == '"') {
            const char *start = p + 1;
            p = string_end(p);
            if (!p)
                return NULL;
            if (depth == 1 && p[1] == ':' && (size_t)(p - start) == length &&
                memcmp(start, key, length) == 0)
                return p + 2; /* the harness writes no spaces */
        } else if (*p == '{' || *p == '[') {
            depth++;
        } else if (*p == '}' || *p == ']') {
            depth--;
        }
    }
    return NULL;
}

/* The number of items of the JSON array that starts at p. */
static long count_items(const char *p) {
    long commas = 0;
    int depth = 0, seen = 0;
    if (*p != '[')
        return 0;
    for (; *p; p++) {
        if (*p == '"') {
            seen |= depth == 1;
            p = string_end(p);
            if (!p)
                return 0;
        } else if (*p == '[' || *p == '{') {
            seen |= depth == 1;
            depth++;
        } else if (*p == ']' || *p == '}') {
            if (--depth == 0)
                return seen ? commas + 1 : 0;
        } else if (depth == 1) {
            if (*p == ',')
                commas++;
            else if (*p != ' ')
                seen = 1;
        }
    }
    return 0;
}

static int is_type(const char *value, const char *type) {
    size_t length = strlen(type);
    return value && value[0] == '"' && strncmp(value + 1, type, length) == 0 &&
           value[length + 1] == '"';
}

int main(int argc, char **argv) {
    int pick_random = argc > 1 && strcmp(argv[1], "random") == 0;
    unsigned long long state = 0x9E3779B97F4A7C15ULL; /* xorshift64 */
    char *line = NULL;
    size_t capacity = 0;
    while (getline(&line, &capacity, stdin) != -1) {
        const char *type = find_key(line, "type");
        if (is_type(type, "hello")) {
            printf("{\"type\":\"hello\",\"protocol\":1,\"name\":\"c_json\"}\n");
        } else if (is_type(type, "act")) {
            const char *decision = find_key(line, "decision");
            const char *legal = find_key(line, "legal");
            long count = legal ? count_items(legal) : 0, index = 0;
            if (pick_random && count > 0) {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                index = (long)(state % (unsigned long long)count);
            }
            fprintf(stderr, "decision %ld: %ld legal, index %ld\n",
                    decision ? strtol(decision, NULL, 10) : -1, count, index);
            printf("{\"type\":\"action\",\"index\":%ld,\"decision\":%ld}\n", index,
                   decision ? strtol(decision, NULL, 10) : 0);
        } else if (is_type(type, "quit")) {
            break;
        } else {
            continue; /* start, end: nothing to answer */
        }
        fflush(stdout); /* a reply must leave at once */
    }
    free(line);
    return 0;
}
