/*
 * mcusim.h - core helpers shared by every board of the mcusim firmware kit:
 * register access, SCB/NVIC/SysTick addresses, DWT cycle counter, ITM
 * stimulus port 0 output and semihosting exit.
 *
 * Register facts: Arm DDI 0403E.b "ARMv7-M Architecture Reference Manual"
 * (ARMv7-M ARM below); semihosting: Arm "Semihosting for AArch32 and
 * AArch64" v2.0. See boards/REGISTERS.md for the full list.
 */
#ifndef MCUSIM_H
#define MCUSIM_H

#include <stdint.h>

#define REG32(addr) (*(volatile uint32_t *)(uintptr_t)(addr))
#define REG8(addr)  (*(volatile uint8_t *)(uintptr_t)(addr))

/* Every polling loop gives up after this many iterations. */
#define MCUSIM_POLL_LIMIT 1000000u

/* Poll until (REG32(addr) & mask) == value; 0 on success, -1 on timeout. */
static inline int mcusim_poll(uint32_t addr, uint32_t mask, uint32_t value)
{
    for (uint32_t i = 0; i < MCUSIM_POLL_LIMIT; i++)
        if ((REG32(addr) & mask) == value)
            return 0;
    return -1;
}

static inline void mcusim_dsb(void) { __asm volatile ("dsb" ::: "memory"); }
static inline void mcusim_isb(void) { __asm volatile ("isb" ::: "memory"); }

/* ---- System control block (ARMv7-M ARM B3.2.2, table B3-4) ---- */
#define SCB_ICSR    0xE000ED04u   /* B3.2.4 */
#define ICSR_PENDSVSET (1u << 28)
#define SCB_VTOR    0xE000ED08u   /* B3.2.5 */
#define SCB_AIRCR   0xE000ED0Cu   /* B3.2.6 */
#define SCB_CCR     0xE000ED14u   /* B3.2.8 */
#define SCB_SHPR2   0xE000ED1Cu   /* B3.2.11: [31:24] SVCall priority */
#define SCB_SHPR3   0xE000ED20u   /* B3.2.12: [23:16] PendSV, [31:24] SysTick */
#define SCB_SHCSR   0xE000ED24u   /* B3.2.13 */
#define SCB_CFSR    0xE000ED28u   /* B3.2.15 */
#define CFSR_UNDEFINSTR (1u << 16)
#define SCB_HFSR    0xE000ED2Cu   /* B3.2.16 */
#define HFSR_FORCED (1u << 30)
#define SCB_CPACR   0xE000ED88u   /* B3.2.20: CP10 [21:20], CP11 [23:22] */
#define CPACR_CP10_CP11_FULL (0xFu << 20)

/* ---- SysTick (ARMv7-M ARM B3.3) ---- */
#define SYST_CSR    0xE000E010u   /* B3.3.3 */
#define SYST_CSR_ENABLE    (1u << 0)
#define SYST_CSR_TICKINT   (1u << 1)
#define SYST_CSR_CLKSOURCE (1u << 2) /* 1 = processor clock */
#define SYST_RVR    0xE000E014u   /* B3.3.4, 24-bit reload */
#define SYST_CVR    0xE000E018u   /* B3.3.5 */

/* ---- NVIC (ARMv7-M ARM B3.4.3, table B3-8) ---- */
#define NVIC_ISER(n) (0xE000E100u + 4u * (n))  /* B3.4.4 */
#define NVIC_ICER(n) (0xE000E180u + 4u * (n))  /* B3.4.5 */
#define NVIC_ISPR(n) (0xE000E200u + 4u * (n))  /* B3.4.6 */
#define NVIC_ICPR(n) (0xE000E280u + 4u * (n))  /* B3.4.7 */
#define NVIC_IPR8(irq) (0xE000E400u + (irq))   /* B3.4.9, byte access */

/* ---- Debug: DEMCR (C1.6.5), DWT (C1.8), ITM (C1.7) ---- */
#define DEMCR       0xE000EDFCu
#define DEMCR_TRCENA (1u << 24)
#define DWT_CTRL    0xE0001000u   /* C1.8.7 */
#define DWT_CTRL_CYCCNTENA (1u << 0)
#define DWT_CTRL_NOCYCCNT  (1u << 25)
#define DWT_CYCCNT  0xE0001004u   /* C1.8.8 */
#define DWT_LAR     0xE0001FB0u   /* CoreSight lock access (Cortex-M7 TRM) */
#define CORESIGHT_UNLOCK 0xC5ACCE55u
#define ITM_STIM0   0xE0000000u   /* C1.7.3: read bit 0 = FIFOREADY */
#define ITM_TER0    0xE0000E00u   /* C1.7.4 */
#define ITM_TCR     0xE0000E80u   /* C1.7.6: bit 0 ITMENA */

/* Enable the DWT cycle counter. Returns 0 if CYCCNT exists, -1 if
 * DWT_CTRL.NOCYCCNT says there is none. */
static inline int mcusim_cyccnt_enable(void)
{
    REG32(DEMCR) |= DEMCR_TRCENA;
#ifdef MCUSIM_CORE_M7
    REG32(DWT_LAR) = CORESIGHT_UNLOCK;   /* M7 DWT has a software lock */
#endif
    if (REG32(DWT_CTRL) & DWT_CTRL_NOCYCCNT)
        return -1;
    REG32(DWT_CYCCNT) = 0;
    REG32(DWT_CTRL) |= DWT_CTRL_CYCCNTENA;
    return 0;
}

static inline uint32_t mcusim_cyccnt(void)
{
    return REG32(DWT_CYCCNT);
}

/* A hand-written loop: runs `iterations` times with `arg` in r1 (AAPCS). */
typedef void mcusim_loop_fn(uint32_t iterations, const void *arg);

static __attribute__((noinline)) uint32_t mcusim_time_loop(mcusim_loop_fn *loop, uint32_t iterations,
                                                           const void *arg)
{
    uint32_t t0 = REG32(DWT_CYCCNT);
    loop(iterations, arg);
    return REG32(DWT_CYCCNT) - t0;
}

/* CYCCNT cycles of 100 iterations of `loop`: 200 iterations minus 100, after a
 * warm-up call, so the call, the first iteration and cold caches cancel out. */
static inline long mcusim_cycles_per_100(mcusim_loop_fn *loop, const void *arg)
{
    mcusim_time_loop(loop, 100, arg);
    uint32_t hundred = mcusim_time_loop(loop, 100, arg);
    return (long)mcusim_time_loop(loop, 200, arg) - (long)hundred;
}

/* Enable CYCCNT and check that it moves: 1 if it counts, 0 if there is no
 * counter or it stays put (QEMU's DWT reads as zero). */
static inline int mcusim_cyccnt_counts(void)
{
    uint32_t before = mcusim_cyccnt_enable() == 0 ? mcusim_cyccnt() : 0;
    for (volatile int i = 0; i < 10; i++)
        ;
    return mcusim_cyccnt() != before;
}

/* Write one character to ITM stimulus port 0, like CMSIS ITM_SendChar:
 * only when ITMENA and TER bit 0 are set, waiting for FIFOREADY. */
static inline void mcusim_itm_putc(char c)
{
    if ((REG32(ITM_TCR) & 1u) && (REG32(ITM_TER0) & 1u)) {
        for (uint32_t i = 0; i < MCUSIM_POLL_LIMIT; i++)
            if (REG32(ITM_STIM0) & 1u)
                break;
        REG8(ITM_STIM0) = (uint8_t)c;
    }
}

/* ---- Region markers (ITM stimulus ports 30 and 31) ----
 * A region is a named stretch of execution (a layer, an inference). Its start writes the
 * address of its name (a NUL-terminated string in the image) as one 32-bit word to ITM
 * stimulus port 30, its end the same address to port 31. One store each, so marking costs
 * next to nothing, and a host tool resolves the name from the ELF: mcusim does (regions.csv,
 * `mcusim report`), and on a board the same words arrive over SWO. Regions nest. A table
 * `mcusim_region_info` of {name, MACs, bytes} records (ending with a NULL name), if the image
 * has one, tells mcusim the work each named region does. */
#define MCUSIM_REGION_BEGIN_PORT 30
#define MCUSIM_REGION_END_PORT   31

typedef struct {
    const char *name;
    uint32_t macs, bytes;
} mcusim_region_info_t;

static inline void mcusim_itm_word(uint32_t port, uint32_t value)
{
    if ((REG32(ITM_TCR) & 1u) && (REG32(ITM_TER0) >> port & 1u)) {
        for (uint32_t i = 0; i < MCUSIM_POLL_LIMIT; i++)
            if (REG32(ITM_STIM0 + 4u * port) & 1u)
                break;
        REG32(ITM_STIM0 + 4u * port) = value;
    }
}

static inline void mcusim_region_begin(const char *name)
{
    mcusim_itm_word(MCUSIM_REGION_BEGIN_PORT, (uint32_t)(uintptr_t)name);
}

static inline void mcusim_region_end(const char *name)
{
    mcusim_itm_word(MCUSIM_REGION_END_PORT, (uint32_t)(uintptr_t)name);
}

/* ---- Semihosting (BKPT 0xAB; r0 = operation, r1 = parameter) ---- */
#define SEMIHOST_SYS_EXIT_EXTENDED 0x20u
#define ADP_STOPPED_APPLICATION_EXIT 0x20026u

static inline int mcusim_semihost(uint32_t op, void *arg)
{
    register uint32_t r0 __asm("r0") = op;
    register void *r1 __asm("r1") = arg;
    __asm volatile ("bkpt 0xab" : "+r"(r0) : "r"(r1) : "memory");
    return (int)r0;
}

/* Stop the program with an exit code (SYS_EXIT_EXTENDED). Does not return. */
static inline __attribute__((noreturn)) void mcusim_exit(int code)
{
    uint32_t block[2] = { ADP_STOPPED_APPLICATION_EXIT, (uint32_t)code };
    mcusim_semihost(SEMIHOST_SYS_EXIT_EXTENDED, block);
    for (;;)
        __asm volatile ("wfi");
}

/* A HardFault handler that passes the stacked exception frame (r0-r3, r12, lr, pc, xpsr)
 * to `c_handler(uint32_t *frame)`: EXC_RETURN bit 2 tells which stack holds it
 * (ARMv7-M ARM B1.5.8). Use once per program: MCUSIM_HARDFAULT_WITH_FRAME(my_handler) */
#define MCUSIM_HARDFAULT_WITH_FRAME(c_handler)                    \
    __attribute__((naked)) void HardFault_Handler(void)           \
    {                                                             \
        __asm volatile("tst lr, #4\n"                            \
                       "ite eq\n"                                \
                       "mrseq r0, msp\n"                         \
                       "mrsne r0, psp\n"                         \
                       "b " #c_handler "\n");                    \
    }

#endif /* MCUSIM_H */
