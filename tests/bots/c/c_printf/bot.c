/* A MessagePack bot in C, with no library, that keeps a C habit: it
 * printf()s a debug line to stdout before each reply. stdout is a pipe, so
 * the line and the reply leave together at the fflush. The harness must name
 * that as text on stdout (tests/test_wire.py), not as whatever the letters
 * decode to as MessagePack (small integers: "more than one message").
 * It answers index 0. Build: make (or: cc -O2 -o bot bot.c) */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const uint8_t *skip(const uint8_t *p, const uint8_t *end);

static uint64_t big_endian(const uint8_t *p, int size) {
    uint64_t value = 0;
    for (int i = 0; i < size; i++)
        value = value << 8 | p[i];
    return value;
}

static const uint8_t *skip_values(const uint8_t *p, const uint8_t *end, uint64_t count) {
    while (p && count--)
        p = skip(p, end);
    return p;
}

static const uint8_t *skip_bytes(const uint8_t *p, const uint8_t *end, uint64_t count) {
    return (uint64_t)(end - p) >= count ? p + count : NULL;
}

/* The end of the MessagePack value at p, or NULL while it is incomplete. */
static const uint8_t *skip(const uint8_t *p, const uint8_t *end) {
    if (p >= end)
        return NULL;
    uint8_t b = *p++;
    if (b <= 0x7f || b >= 0xe0 || b == 0xc0 || b == 0xc2 || b == 0xc3)
        return p;
    if (b <= 0x8f)
        return skip_values(p, end, 2u * (b & 0x0f));
    if (b <= 0x9f)
        return skip_values(p, end, b & 0x0f);
    if (b <= 0xbf)
        return skip_bytes(p, end, b & 0x1f);
    switch (b) {
    case 0xcc: case 0xd0: return skip_bytes(p, end, 1);
    case 0xcd: case 0xd1: case 0xd4: return skip_bytes(p, end, 2);
    case 0xd5: return skip_bytes(p, end, 3);
    case 0xca: case 0xce: case 0xd2: return skip_bytes(p, end, 4);
    case 0xd6: return skip_bytes(p, end, 5);
    case 0xcb: case 0xcf: case 0xd3: return skip_bytes(p, end, 8);
    case 0xd7: return skip_bytes(p, end, 9);
    case 0xd8: return skip_bytes(p, end, 17);
    }
    int size = (b == 0xc4 || b == 0xc7 || b == 0xd9) ? 1
             : (b == 0xc5 || b == 0xc8 || b == 0xda || b == 0xdc || b == 0xde) ? 2 : 4;
    if (end - p < size)
        return NULL;
    uint64_t length = big_endian(p, size);
    p += size;
    if (b == 0xdc || b == 0xdd)
        return skip_values(p, end, length);
    if (b == 0xde || b == 0xdf)
        return skip_values(p, end, 2 * length);
    if (b >= 0xc7 && b <= 0xc9)
        length += 1; /* an extension's type byte */
    return skip_bytes(p, end, length);
}

/* Whether the message (a map) at p has "type" equal to `type`. */
static int has_type(const uint8_t *p, const uint8_t *end, const char *type) {
    if ((*p & 0xf0) != 0x80)
        return 0;
    int pairs = *p++ & 0x0f;
    size_t length = strlen(type);
    for (int i = 0; i < pairs && p; i++) {
        int is_type_key = end - p >= 5 && memcmp(p, "\xa4type", 5) == 0;
        p = skip(p, end);
        if (p && is_type_key)
            return (size_t)(end - p) > length && *p == (0xa0 | length) &&
                   memcmp(p + 1, type, length) == 0;
        p = skip(p, end);
    }
    return 0;
}

static void reply(const char *bytes, size_t size) {
    fwrite(bytes, 1, size, stdout);
    fflush(stdout); /* the debug line above it leaves too */
}

int main(void) {
    static const char hello[] = "\x83\xa4type\xa5hello\xa8protocol\x01\xa4name\xa8" "c_printf";
    static const char action[] = "\x82\xa4type\xa6" "action\xa5index\x00";
    size_t capacity = 1 << 16, used = 0;
    uint8_t *buffer = malloc(capacity);
    for (;;) {
        if (used == capacity)
            buffer = realloc(buffer, capacity *= 2);
        ssize_t got = read(0, buffer + used, capacity - used);
        if (got <= 0)
            return 0;
        used += (size_t)got;
        const uint8_t *p = buffer, *end = buffer + used, *next;
        while ((next = skip(p, end)) != NULL) {
            if (has_type(p, next, "hello")) {
                reply(hello, sizeof hello - 1);
            } else if (has_type(p, next, "act")) {
                printf("debug: thinking\n");
                reply(action, sizeof action - 1);
            } else if (has_type(p, next, "quit")) {
                return 0;
            }
            p = next;
        }
        used = (size_t)(end - p);
        memmove(buffer, p, used);
    }
}
