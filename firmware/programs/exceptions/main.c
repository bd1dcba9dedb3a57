/*
 * exceptions: SysTick, SVC, PendSV, nested priorities, FP context across
 * an exception, and a recovered HardFault. Output (semihosting) is
 * deterministic; exit status 0 if every check passed, 1 otherwise.
 *
 * Priorities (upper bits only, valid with 3 or 4 implemented bits):
 *   SysTick 0x20 > IRQ0 0x40 > SVCall 0x80 > PendSV 0xE0.
 * Nesting test: PendSV handler records 'P', pends IRQ0 (preempts: 'I'),
 * executes SVC (higher priority than PendSV: 'S'), then records 'p'.
 * Expected order "PISp".
 */
#include <stdio.h>
#include <string.h>
#include "board.h"
#include "mcusim.h"

#define TICKS_WANTED   3u
#define TICK_TIMEOUT   50000000u
#define SVC_IMM        42
#define NEST_SVC_IMM   7

enum { PENDSV_COUNT, PENDSV_NEST, PENDSV_FPU };

static volatile uint32_t g_ticks;
static volatile uint32_t g_svc_count, g_svc_imm;
static volatile uint32_t g_pendsv_count, g_pendsv_mode;
static volatile char g_order[8];
static volatile uint32_t g_order_len;
static volatile float g_fa = 1.5f, g_fb = 2.25f, g_fres;
static volatile uint32_t g_expect_fault, g_faults, g_fault_insn;
static int g_failures;

static void record(char c)
{
    if (g_order_len < sizeof(g_order) - 1)
        g_order[g_order_len++] = c;
}

static void check(int ok, const char *what)
{
    printf("exceptions: %-28s %s\n", what, ok ? "ok" : "FAIL");
    if (!ok)
        g_failures++;
}

void SysTick_Handler(void)
{
    g_ticks++;
}

void IRQ0_Handler(void)
{
    record('I');
}

/* Handlers that need the stacked frame: pass MSP or PSP (EXC_RETURN
 * bit 2) to C. Frame: r0 r1 r2 r3 r12 lr pc xpsr (ARMv7-M ARM B1.5.6). */
__attribute__((naked)) void SVC_Handler(void)
{
    __asm volatile(
        "tst lr, #4\n"
        "ite eq\n"
        "mrseq r0, msp\n"
        "mrsne r0, psp\n"
        "b svc_handler_c\n");
}

__attribute__((used)) void svc_handler_c(uint32_t *frame)
{
    const uint16_t *pc = (const uint16_t *)frame[6];
    g_svc_imm = pc[-1] & 0xFFu;      /* SVC T1 encoding: 0xDFxx */
    g_svc_count++;
    record('S');
}

MCUSIM_HARDFAULT_WITH_FRAME(hardfault_handler_c)

__attribute__((used)) void hardfault_handler_c(uint32_t *frame)
{
    uint16_t insn = *(const uint16_t *)frame[6];
    if (!g_expect_fault || (insn & 0xFF00u) != 0xDE00u)
        mcusim_exit(128 + 3);        /* unexpected fault */
    g_fault_insn = insn;
    g_faults++;
    frame[6] += 2;                   /* skip the 16-bit UDF */
}

void PendSV_Handler(void)
{
    static const uint32_t junk[16] = {
        0xDEADBEEF, 0xDEADBEEF, 0xDEADBEEF, 0xDEADBEEF,
        0xDEADBEEF, 0xDEADBEEF, 0xDEADBEEF, 0xDEADBEEF,
        0xDEADBEEF, 0xDEADBEEF, 0xDEADBEEF, 0xDEADBEEF,
        0xDEADBEEF, 0xDEADBEEF, 0xDEADBEEF, 0xDEADBEEF };

    g_pendsv_count++;
    switch (g_pendsv_mode) {
    case PENDSV_NEST:
        record('P');
        REG32(NVIC_ISPR(0)) = 1u << 0;
        mcusim_dsb();
        mcusim_isb();
        __asm volatile ("svc %0" :: "i"(NEST_SVC_IMM) : "memory");
        record('p');
        break;
    case PENDSV_FPU:
        /* Clobber the caller-saved FP registers, compute, then change
         * FPSCR rounding mode (bits [23:22] = 0b11, round to zero). */
        __asm volatile ("vldmia %0, {s0-s15}" :: "r"(junk)
                        : "s0", "s1", "s2", "s3", "s4", "s5", "s6", "s7",
                          "s8", "s9", "s10", "s11", "s12", "s13", "s14",
                          "s15", "memory");
        g_fres = g_fa * g_fb + 0.125f;
        {
            uint32_t fpscr;
            __asm volatile ("vmrs %0, fpscr" : "=r"(fpscr));
            fpscr |= 3u << 22;
            __asm volatile ("vmsr fpscr, %0" :: "r"(fpscr));
        }
        break;
    default:
        break;
    }
}

static void pend_pendsv(void)
{
    REG32(SCB_ICSR) = ICSR_PENDSVSET;
    mcusim_dsb();
    mcusim_isb();
}

static void set_priorities(void)
{
    REG32(SCB_SHPR2) = (REG32(SCB_SHPR2) & 0x00FFFFFFu) | (0x80u << 24);
    REG32(SCB_SHPR3) = (REG32(SCB_SHPR3) & 0x0000FFFFu)
                       | (0x20u << 24) | (0xE0u << 16);
    REG8(NVIC_IPR8(0)) = 0x40;
}

static void test_systick(void)
{
    uint32_t i;
    REG32(SYST_CSR) = 0;
    REG32(SYST_RVR) = SystemCoreClock / 1000u - 1u;
    REG32(SYST_CVR) = 0;
    g_ticks = 0;
    REG32(SYST_CSR) = SYST_CSR_CLKSOURCE | SYST_CSR_TICKINT | SYST_CSR_ENABLE;
    for (i = 0; i < TICK_TIMEOUT && g_ticks < TICKS_WANTED; i++)
        ;
    REG32(SYST_CSR) = 0;
    check(g_ticks >= TICKS_WANTED, "systick 1 kHz, 3 ticks");
}

static void test_svc(void)
{
    g_svc_count = 0;
    __asm volatile ("svc %0" :: "i"(SVC_IMM) : "memory");
    check(g_svc_count == 1 && g_svc_imm == SVC_IMM, "svc #42 seen by handler");
}

static void test_pendsv(void)
{
    g_pendsv_mode = PENDSV_COUNT;
    g_pendsv_count = 0;
    pend_pendsv();
    check(g_pendsv_count == 1, "pendsv ran");
}

static void test_nesting(void)
{
    char order[sizeof(g_order)];

    g_order_len = 0;
    REG32(NVIC_ICPR(0)) = 1u << 0;
    REG32(NVIC_ISER(0)) = 1u << 0;
    g_pendsv_mode = PENDSV_NEST;
    g_svc_count = 0;
    pend_pendsv();
    REG32(NVIC_ICER(0)) = 1u << 0;

    for (uint32_t i = 0; i < g_order_len; i++)
        order[i] = g_order[i];
    order[g_order_len] = '\0';
    printf("exceptions: nesting order \"%s\" (want \"PISp\")\n", order);
    check(strcmp(order, "PISp") == 0 && g_svc_imm == NEST_SVC_IMM,
          "nested priorities");
}

static void test_fpu(void)
{
    static uint32_t in[32], out[32];
    uint32_t fpscr_before, fpscr_after;
    int same = 1;

    for (int i = 0; i < 32; i++) {
        float f = (float)(i + 1) * 0.5f;
        memcpy(&in[i], &f, sizeof(f));
    }
    g_pendsv_mode = PENDSV_FPU;
    g_fres = 0.0f;
    __asm volatile ("vmrs %0, fpscr" : "=r"(fpscr_before));
    /* Load s0-s31, take PendSV, store s0-s31, all in one block. */
    __asm volatile(
        "vldmia %[in], {s0-s31}\n"
        "str %[pend], [%[icsr]]\n"
        "dsb\n"
        "isb\n"
        "vstmia %[out], {s0-s31}\n"
        :
        : [in] "r"(in), [out] "r"(out), [icsr] "r"(SCB_ICSR),
          [pend] "r"(ICSR_PENDSVSET)
        : "s0", "s1", "s2", "s3", "s4", "s5", "s6", "s7", "s8", "s9",
          "s10", "s11", "s12", "s13", "s14", "s15", "s16", "s17", "s18",
          "s19", "s20", "s21", "s22", "s23", "s24", "s25", "s26", "s27",
          "s28", "s29", "s30", "s31", "memory");
    __asm volatile ("vmrs %0, fpscr" : "=r"(fpscr_after));

    for (int i = 0; i < 32; i++)
        if (in[i] != out[i])
            same = 0;
    check(g_fres == 3.5f, "fpu used in handler");
    check(same, "s0-s31 preserved");
    check((fpscr_before & (3u << 22)) == (fpscr_after & (3u << 22)),
          "fpscr preserved");
}

static void test_fault(void)
{
    g_faults = 0;
    REG32(SCB_HFSR) = HFSR_FORCED;        /* write 1 to clear */
    REG32(SCB_CFSR) = CFSR_UNDEFINSTR;
    g_expect_fault = 1;
    __asm volatile (".inst.n 0xde00" ::: "memory");   /* UDF #0 */
    g_expect_fault = 0;
    uint32_t hfsr = REG32(SCB_HFSR), cfsr = REG32(SCB_CFSR);
    check(g_faults == 1 && g_fault_insn == 0xDE00u, "udf -> hardfault, resumed");
    check((hfsr & HFSR_FORCED) && (cfsr & CFSR_UNDEFINSTR),
          "hfsr.forced, cfsr.undefinstr");
    REG32(SCB_HFSR) = HFSR_FORCED;
    REG32(SCB_CFSR) = CFSR_UNDEFINSTR;
}

int main(void)
{
    printf("exceptions: board %s\n", BOARD_NAME);
    set_priorities();
    test_systick();
    test_svc();
    test_pendsv();
    test_nesting();
    test_fpu();
    test_fault();
    if (g_failures) {
        printf("exceptions: %d check(s) FAILED\n", g_failures);
        return 1;
    }
    printf("exceptions: all ok\n");
    return 0;
}
