// cxx.cpp - diff-core's C++ part: global objects built by constructors before main (through
// __libc_init_array), virtual calls, templates, static locals. No exceptions, RTTI or
// libstdc++.
#include <stdint.h>
#include "diff.h"

namespace {

uint32_t construction_log = 2166136261u;

struct Shape {
    explicit Shape(uint32_t id) : id_(id) { construction_log = diff_hash_word(construction_log, id); }
    virtual uint32_t area(uint32_t scale) const { return scale; }  // (not pure: no libsupc++ needed)
    uint32_t id_;
};

struct Square : Shape {
    Square(uint32_t id, uint32_t side) : Shape(id), side_(side) {}
    uint32_t area(uint32_t scale) const override { return side_ * side_ * scale; }
    uint32_t side_;
};

struct Triangle : Shape {
    Triangle(uint32_t id, uint32_t base, uint32_t height) : Shape(id), base_(base), height_(height) {}
    uint32_t area(uint32_t scale) const override { return base_ * height_ * scale / 2 + id_; }
    uint32_t base_, height_;
};

template <typename T, int N>
struct Ring {
    T items[N] = {};
    int next = 0;
    void push(T value) { items[next] = value; next = (next + 1) % N; }
    uint32_t digest() const { return diff_hash(2166136261u, items, sizeof items); }
};

Square square_a(1, 7);          // constructed before main, in declaration order
Triangle triangle_b(2, 9, 4);
Square square_c(3, 12);
const Shape *const shapes[] = {&square_a, &triangle_b, &square_c};

uint32_t counted()
{
    static uint32_t calls = 100;  // a static local (no thread-safe guard: -fno-threadsafe-statics)
    return ++calls;
}

}  // namespace

extern "C" uint32_t diff_cxx(void)
{
    uint32_t h = construction_log;
    Ring<uint16_t, 7> ring;
    for (uint32_t scale = 1; scale < 50; scale++) {
        for (const Shape *shape : shapes)
            ring.push(static_cast<uint16_t>(shape->area(scale) ^ counted()));
        h = diff_hash_word(h, ring.digest());
    }
    return h;
}
