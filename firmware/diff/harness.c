/*
 * harness.c - command line, flash/cache configurations, hashing and reporting for the
 * differential programs (diff.h). Register facts are in firmware/boards/REGISTERS.md, with
 * their sources; the kit's boards/<board>/system.c set the same registers.
 */
#include <stdio.h>
#include <string.h>
#include "diff.h"
#include "mcusim.h"

#define T(i) (uint8_t)(((i) * 37u + 11u) ^ ((i) >> 3)),
#define T8(i) T(i) T(i + 1) T(i + 2) T(i + 3) T(i + 4) T(i + 5) T(i + 6) T(i + 7)
#define T64(i) T8(i) T8(i + 8) T8(i + 16) T8(i + 24) T8(i + 32) T8(i + 40) T8(i + 48) T8(i + 56)
__attribute__((aligned(8))) const uint8_t diff_table[1024] = {
    T64(0) T64(64) T64(128) T64(192) T64(256) T64(320) T64(384) T64(448)
    T64(512) T64(576) T64(640) T64(704) T64(768) T64(832) T64(896) T64(960)
};

uint32_t diff_hash(uint32_t h, const void *data, size_t bytes)
{
    const uint8_t *p = data;
    while (bytes--)
        h = (h ^ *p++) * 16777619u;
    return h;
}

uint32_t diff_hash_word(uint32_t h, uint32_t word)
{
    return diff_hash(h, &word, sizeof word);
}

void diff_report(const char *name, uint32_t value)
{
    printf("%s %08lx\n", name, (unsigned long)value);
}

/* ---- configurations ---- */

/* STM32L476 FLASH_ACR (RM0351 3.7.1): LATENCY[2:0], PRFTEN 8, ICEN 9, DCEN 10, ICRST 11, DCRST 12. */
#define L4_FLASH_ACR 0x40022000u
static const uint8_t l4_configs[][4] = {  /* latency, prefetch, icache, dcache */
    {0, 0, 0, 0}, {1, 0, 0, 0}, {2, 1, 0, 0}, {3, 0, 1, 1}, {4, 0, 0, 0},
    {4, 1, 0, 0}, {4, 0, 1, 0}, {4, 0, 0, 1}, {4, 1, 1, 1}, {2, 1, 1, 1},
};

static void l4_configure(unsigned i)
{
    const uint8_t *c = l4_configs[i];
    REG32(L4_FLASH_ACR) = c[0];                     /* caches off, then reset them */
    REG32(L4_FLASH_ACR) = c[0] | (3u << 11);
    REG32(L4_FLASH_ACR) = c[0] | (uint32_t)c[1] << 8 | (uint32_t)c[2] << 9 | (uint32_t)c[3] << 10;
    printf("config mcu-m %u: latency %u, prefetch %u, icache %u, dcache %u\n", i, c[0], c[1], c[2], c[3]);
}

/* STM32F746 FLASH_ACR (RM0385 3.7.1): LATENCY[3:0], PRFTEN 8, ARTEN 9, ARTRST 11. Cortex-M7 L1
 * caches: SCB CCR IC 17, DC 16 (ARMv7-M ARM B3.2.8), invalidated first by ICIALLU 0xE000EF50 and
 * DCISW 0xE000EF60 over every set and way (CCSIDR 0xE000ED80 after CSSELR 0xE000ED84 = 0). */
#define F7_FLASH_ACR 0x40023C00u
static const uint8_t f7_configs[][6] = {  /* latency, ART, prefetch, icache, dcache, through ITCM */
    {0, 0, 0, 0, 0, 0}, {7, 0, 0, 0, 0, 0}, {7, 0, 0, 1, 0, 0}, {7, 0, 0, 0, 1, 0}, {7, 0, 0, 1, 1, 0},
    {7, 1, 1, 1, 1, 0}, {7, 0, 0, 0, 0, 1}, {7, 1, 0, 0, 0, 1}, {7, 1, 1, 0, 1, 1}, {3, 1, 1, 1, 1, 1},
};
static int through_itcm;

static void f7_configure(unsigned i)
{
    const uint8_t *c = f7_configs[i];
    REG32(F7_FLASH_ACR) = c[0];
    REG32(F7_FLASH_ACR) = c[0] | (1u << 11);
    REG32(F7_FLASH_ACR) = c[0] | (uint32_t)c[1] << 9 | (uint32_t)c[2] << 8;
    REG32(0xE000ED84u) = 0;
    mcusim_dsb();
    uint32_t ccsidr = REG32(0xE000ED80u);
    uint32_t sets = ((ccsidr >> 13) & 0x7FFFu) + 1, ways = ((ccsidr >> 3) & 0x3FFu) + 1;
    for (uint32_t set = 0; set < sets; set++)
        for (uint32_t way = 0; way < ways; way++)
            REG32(0xE000EF60u) = (set << 5) | (way << 30);
    REG32(0xE000EF50u) = 0;
    mcusim_dsb();
    mcusim_isb();
    REG32(SCB_CCR) |= (uint32_t)c[3] << 17 | (uint32_t)c[4] << 16;
    mcusim_dsb();
    mcusim_isb();
    through_itcm = c[5];
    printf("config mcu-d %u: latency %u, ART %u, prefetch %u, icache %u, dcache %u, itcm %u\n",
           i, c[0], c[1], c[2], c[3], c[4], c[5]);
}

/* nRF52840 NVMC ICACHECNF 0x4001E540, CACHEEN bit 0 (nRF52840 PS 4.3.10). */
static void nrf_configure(unsigned i)
{
    REG32(0x4001E540u) = i;
    printf("config mcu-s %u: icache %u\n", i, i);
}

/* Apollo3 CACHECTRL CACHECFG 0x40018000 (ENABLE 0, CONFIG 7:4, ICACHE_ENABLE 8, DCACHE_ENABLE 9),
 * FLASHCFG 0x40018004 (RD_WAIT 3:0); burst mode through MCUCTRL FEATUREENABLE 0x40020018
 * (BURSTREQ 4, ACK 5, AVAIL 6) and CLKGEN FREQCTRL 0x40004034 (BURSTREQ 0, STATUS 2). */
static const uint8_t apollo_configs[][5] = {  /* rd_wait, config, icache, dcache, burst */
    {3, 0, 0, 0, 0}, {3, 8, 1, 0, 0}, {3, 8, 1, 1, 0}, {1, 8, 1, 1, 0}, {1, 4, 1, 1, 0}, {1, 5, 1, 1, 1},
};

static void apollo_configure(unsigned i)
{
    const uint8_t *c = apollo_configs[i];
    REG32(0x40018004u) = (REG32(0x40018004u) & ~0xFu) | c[0];
    REG32(0x40018000u) = 0;
    if (c[1]) {
        uint32_t cfg = (uint32_t)c[1] << 4 | (uint32_t)c[2] << 8 | (uint32_t)c[3] << 9;
        REG32(0x40018000u) = cfg;
        REG32(0x40018000u) = cfg | 1u;
    }
    if (c[4]) {
        REG32(0x40020018u) |= 1u << 4;
        if (mcusim_poll(0x40020018u, 1u << 5, 1u << 5) == 0 && (REG32(0x40020018u) & (1u << 6))) {
            REG32(0x40004034u) = 1u;
            mcusim_poll(0x40004034u, 1u << 2, 1u << 2);
        }
    }
    printf("config mcu-b %u: rd_wait %u, cache config %u, icache %u, dcache %u, burst %u\n",
           i, c[0], c[1], c[2], c[3], c[4]);
}

struct board_configs {
    const char *board;
    unsigned count;
    void (*configure)(unsigned index);
};

static void none_configure(unsigned i) { printf("config %u: reset settings\n", i); }

static const struct board_configs boards[] = {
    {"mcu-m", sizeof l4_configs / sizeof l4_configs[0], l4_configure},
    {"mcu-d", sizeof f7_configs / sizeof f7_configs[0], f7_configure},
    {"mcu-s", 2, nrf_configure},
    {"mcu-b", sizeof apollo_configs / sizeof apollo_configs[0], apollo_configure},
    {"mps2-an386", 1, none_configure},
    {"mps2-an500", 1, none_configure},
    {"qemu", 1, none_configure},
};

static const struct board_configs *find_board(const char *name)
{
    for (size_t i = 0; i < sizeof boards / sizeof boards[0]; i++)
        if (strcmp(boards[i].board, name) == 0)
            return &boards[i];
    return NULL;
}

unsigned diff_config_count(const char *board)
{
    const struct board_configs *b = find_board(board);
    return b ? b->count : 0;
}

void *diff_code(void *function)
{
    uintptr_t at = (uintptr_t)function;
    if (through_itcm && at >= 0x08000000u && at < 0x08100000u)   /* RM0385 2.4: ITCM alias */
        at = at - 0x08000000u + 0x00200000u;
    return (void *)at;
}

const void *diff_rodata(const void *data)
{
    return diff_code((void *)(uintptr_t)data);
}

/* SYS_GET_CMDLINE (0x15): the command line as one string (Arm semihosting spec). */
static char cmdline[128];

void diff_setup(void)
{
    struct { char *buffer; uint32_t length; } block = { cmdline, sizeof cmdline };
    char *words[3] = {0};
    int count = 0;
    if (mcusim_semihost(0x15u, &block) == 0) {
        for (char *p = strtok(cmdline, " "); p && count < 3; p = strtok(NULL, " "))
            words[count++] = p;
    }
    if (count < 3)
        return;
    const struct board_configs *b = find_board(words[1]);
    unsigned index = 0;
    for (const char *d = words[2]; *d; d++)
        index = index * 10u + (unsigned)(*d - '0');
    if (b == NULL || index >= b->count) {
        printf("no configuration %s of board %s\n", words[2], words[1]);
        mcusim_exit(DIFF_EXIT_NO_CONFIG);
    }
    b->configure(index);
}
