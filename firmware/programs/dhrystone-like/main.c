/*
 * dhrystone-like: the kinds of work Dhrystone mixes, written for this kit (no Dhrystone code):
 * many small calls, record (struct) copies and field assignments, copies and compares of
 * constant strings that live in flash, and integer arithmetic (multiply, divide, modulo).
 * Speed measurements (benchmarks/speed.py) run it on every board.
 *
 * Each iteration starts from a state seeded by (iteration % PHASES) and its hash must equal
 * expected[phase]; those values come from this same file built for the host
 * (`gcc -O2 -DHOST_EXPECTED main.c && ./a.out`, also run by tests/integration/
 * test_speed_workloads.py), so a short -DITERATIONS build checks itself the same way.
 * Prints the combined hash; returns 1 at the first iteration that differs.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#ifndef ITERATIONS
#define ITERATIONS 1500
#endif
#define PHASES 4
#define STEPS 100
#define CALL __attribute__((noinline, noclone))

typedef enum { RED, GREEN, BLUE, GREY } colour;

typedef struct record {
    struct record *link;
    colour tint;
    int32_t count;
    int32_t weight;
    char label[32];
} record;

/* Constant strings and a template record: in flash on every board. */
static const char *const labels[8] = {
    "FIRST LABEL OF THE EIGHT IN ROM", "SECOND LABEL, A LITTLE SHORTER",
    "THIRD LABEL OF THE EIGHT IN ROM", "FOURTH: STRINGS ARE COMPARED",
    "FIFTH LABEL OF THE EIGHT IN ROM", "SIXTH LABEL, COPIED INTO RAM",
    "SEVENTH LABEL OF EIGHT, IN ROM", "EIGHTH AND LAST LABEL IN ROM!",
};
static const record template_record = {NULL, BLUE, 7, 40, "TEMPLATE RECORD, COPIED WHOLE"};

static record first, second, spare;
static char scratch[32];
static int32_t table[16];

CALL static uint32_t mix(uint32_t hash, uint32_t value)
{
    return (hash ^ value) * 16777619u;  /* the FNV-1a prime, one step per word */
}

CALL static colour next_tint(colour c, int32_t n)
{
    return (colour)((c + (n & 1) + 1) & 3);
}

CALL static int same_tint(colour a, colour b)
{
    return a == b;
}

CALL static int32_t scaled(int32_t a, int32_t b)
{
    return a * 3 + b / 5 - (a % 7);
}

CALL static void bump(int32_t *value, int32_t by)
{
    *value += by;
}

CALL static void update_record(record *r, int32_t step)
{
    r->count = scaled(r->count, step) & 0x7FFF;
    r->tint = next_tint(r->tint, step);
    bump(&r->weight, r->count & 15);
}

CALL static int compare_labels(const char *a, const char *b)
{
    int order = strcmp(a, b);
    return order < 0 ? -1 : order > 0;
}

CALL static void link_records(record *from, record *to)
{
    *to = *from;           /* the whole record */
    to->link = from;
    from->link = to;
    to->count = from->count + 1;
}

CALL static int32_t table_step(int32_t index, int32_t value)
{
    table[index & 15] = value;
    table[(index + 5) & 15] += table[index & 15] / 3;
    return table[(index + 9) & 15];
}

static uint32_t iteration(unsigned phase)
{
    uint32_t hash = 2166136261u;  /* the FNV offset basis */
    first = template_record;
    first.count += (int32_t)phase;
    second = template_record;
    second.tint = (colour)phase;
    for (int i = 0; i < 16; i++)
        table[i] = (int32_t)(i * 3 + phase);
    for (int32_t step = 0; step < STEPS; step++) {
        const char *label = labels[(step + phase) & 7];
        strcpy(first.label, label);
        strcpy(scratch, labels[(step * 3) & 7]);
        hash = mix(hash, (uint32_t)compare_labels(first.label, scratch));
        hash = mix(hash, (uint32_t)strlen(scratch));
        update_record(&first, step);
        if (same_tint(first.tint, second.tint))
            link_records(&first, &spare);
        else
            link_records(&second, &spare);
        spare.weight = scaled(spare.weight, first.count) & 0xFFFF;
        second = spare;
        second.link = NULL;
        hash = mix(hash, (uint32_t)table_step(step, spare.weight));
        hash = mix(hash, (uint32_t)(first.count ^ second.weight) + (uint32_t)second.tint);
        hash = mix(hash, (uint32_t)(uint8_t)second.label[(step * 7) & 15]);
    }
    return hash;
}

#ifdef HOST_EXPECTED
int main(void)
{
    for (unsigned phase = 0; phase < PHASES; phase++)
        printf("%s0x%08XU", phase ? ", " : "", (unsigned)iteration(phase));
    printf("\n");
    return 0;
}
#else
/* iteration(phase) from the host build (see the top of this file) */
static const uint32_t expected[PHASES] = {0xA329C2C9U, 0x1267331BU, 0x6DC7037CU, 0x107BB164U};

int main(void)
{
    uint32_t checksum = 0;
    for (unsigned i = 0; i < ITERATIONS; i++) {
        uint32_t hash = iteration(i % PHASES);
        if (hash != expected[i % PHASES]) {
            printf("dhrystone-like: iteration %u: hash 0x%08lX, expected 0x%08lX\n", i, (unsigned long)hash,
                   (unsigned long)expected[i % PHASES]);
            return 1;
        }
        checksum = checksum * 31u + hash;
    }
    printf("dhrystone-like: %u iterations, checksum 0x%08lX ok\n", (unsigned)ITERATIONS, (unsigned long)checksum);
    return 0;
}
#endif
