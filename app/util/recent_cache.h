// The last N values made, by key: asked for a key it still holds, the cache returns that value
// as it is; otherwise the value is made into the oldest slot. For work that a frame repeats a
// few requests apart (a target's two templates search the same windows), where a map would
// allocate and a lookup would cost more than the linear scan of N slots.
// Thread rules: one thread at a time; a returned reference lives until N more misses.
#pragma once

#include <algorithm>

namespace corrtrack {

template <typename Key, typename Value, int N>
class RecentCache {
public:
    // The value under `key`; on a miss `make(value)` fills the oldest slot (whose storage it
    // reuses: vectors keep their capacity).
    template <typename Make>
    Value& get(const Key& key, Make&& make) {
        for (int k = 0; k < used_; ++k)
            if (slots_[k].key == key) return slots_[k].value;
        Slot& s = slots_[next_];
        next_ = (next_ + 1) % N;
        used_ = std::min(used_ + 1, N);
        s.key = key;
        make(s.value);
        return s.value;
    }
    // Forgets every key (the values' storage stays for reuse).
    void clear() { used_ = next_ = 0; }

private:
    struct Slot {
        Key key{};
        Value value{};
    };
    Slot slots_[N];
    int used_ = 0, next_ = 0;
};

}  // namespace corrtrack
