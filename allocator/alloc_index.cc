// The free-node indexes of Allocator, as treaps threaded through the node pool (no
// allocation per node). Priorities only shape the trees; every query is by key, so the
// allocator's results never depend on them.
//
// The address treap keeps, per node, the largest size and the node count of each subtree
// side separately: a node's aggregates change only when one of its links changes, and
// are refreshed from that child alone (which the operation has just visited), so no
// level of a descent loads the sibling's cache line.
#include <fmt/core.h>

#include <algorithm>

#include "allocator/allocator.h"

namespace npuforge::allocator {

uint32_t Allocator::next_prio() { return static_cast<uint32_t>(prio_rng_.next() >> 32); }

// ---- address index ----

void Allocator::a_split(uint32_t t, uint64_t start, uint32_t& l, uint32_t& r) {
  if (t == kNil) {
    l = r = kNil;
    return;
  }
  if (pool_[t].start < start) {
    a_split(pool_[t].right, start, pool_[t].right, r);
    fix_right(t);
    l = t;
  } else {
    a_split(pool_[t].left, start, l, pool_[t].left);
    fix_left(t);
    r = t;
  }
}

uint32_t Allocator::a_merge(uint32_t l, uint32_t r) {
  if (l == kNil) return r;
  if (r == kNil) return l;
  if (pool_[l].prio > pool_[r].prio) {
    pool_[l].right = a_merge(pool_[l].right, r);
    fix_right(l);
    return l;
  }
  pool_[r].left = a_merge(l, pool_[r].left);
  fix_left(r);
  return r;
}

uint32_t Allocator::a_insert(uint32_t t, uint32_t x) {
  if (t == kNil) return x;
  if (pool_[x].prio > pool_[t].prio) {
    a_split(t, pool_[x].start, pool_[x].left, pool_[x].right);
    fix_left(x);
    fix_right(x);
    return x;
  }
  if (pool_[x].start < pool_[t].start) {
    pool_[t].left = a_insert(pool_[t].left, x);
    fix_left(t);
  } else {
    pool_[t].right = a_insert(pool_[t].right, x);
    fix_right(t);
  }
  return t;
}

void Allocator::a_add(uint32_t n) {
  Node& x = pool_[n];
  x.left = x.right = kNil;
  x.l_max = x.r_max = x.l_count = x.r_count = 0;
  x.prio = next_prio();
  a_root_ = a_insert(a_root_, n);
}

uint32_t Allocator::a_erase(uint32_t t, uint64_t start) {
  if (pool_[t].start == start) return a_merge(pool_[t].left, pool_[t].right);
  if (start < pool_[t].start) {
    pool_[t].left = a_erase(pool_[t].left, start);
    fix_left(t);
  } else {
    pool_[t].right = a_erase(pool_[t].right, start);
    fix_right(t);
  }
  return t;
}

// Iterative, with the path kept: x's subtree keeps its node count, so going back up only the
// largest-size aggregates can change, and they stop changing after a few levels (a split or a
// merge moves one node's size; most ancestors' maxima are set by other nodes).
uint32_t Allocator::a_replace(uint32_t t, uint64_t start, uint32_t x) {
  path_.clear();
  uint32_t at = t;
  while (pool_[at].start != start) {
    path_.push_back(at);
    at = start < pool_[at].start ? pool_[at].left : pool_[at].right;
  }
  if (x != at) {  // x inherits at's place, links and aggregates; only its own size differs
    const Node& o = pool_[at];
    Node& n = pool_[x];
    n.left = o.left;
    n.right = o.right;
    n.prio = o.prio;
    n.l_max = o.l_max;
    n.r_max = o.r_max;
    n.l_count = o.l_count;
    n.r_count = o.r_count;
  }
  bool relinked = x != at;  // the parent's link must change
  for (size_t d = path_.size(); d-- > 0;) {
    Node& p = pool_[path_[d]];
    const auto max = static_cast<uint32_t>(agg_max(x));
    if (start < p.start) {
      if (!relinked && p.l_max == max) break;  // nothing above changes either
      p.left = x;
      p.l_max = max;
    } else {
      if (!relinked && p.r_max == max) break;
      p.right = x;
      p.r_max = max;
    }
    relinked = false;
    x = path_[d];
  }
  return path_.empty() ? x : t;
}

uint32_t Allocator::a_first_fit(uint32_t t, uint64_t size) const {
  if (agg_max(t) < size) return kNil;
  for (;;) {
    const Node& n = pool_[t];
    if (n.l_max >= size) {
      t = n.left;
    } else if (n.size >= size) {
      return t;
    } else {
      t = n.right;  // the subtree's maximum guarantees a fit on the right
    }
  }
}

uint32_t Allocator::a_first_fit_from(uint32_t t, uint64_t from, uint64_t size) const {
  if (agg_max(t) < size) return kNil;
  const Node& n = pool_[t];
  if (n.start < from) return a_first_fit_from(n.right, from, size);
  if (uint32_t r = a_first_fit_from(n.left, from, size); r != kNil) return r;
  if (n.size >= size) return t;
  return a_first_fit(n.right, size);  // everything right of t starts after `from`
}

uint32_t Allocator::a_floor(uint64_t addr) const {
  uint32_t best = kNil;
  for (uint32_t t = a_root_; t != kNil;) {
    if (pool_[t].start <= addr) {
      best = t;
      t = pool_[t].right;
    } else {
      t = pool_[t].left;
    }
  }
  return best;
}

uint64_t Allocator::a_rank(uint64_t start) const {
  uint64_t count = 0;
  for (uint32_t t = a_root_; t != kNil;) {
    if (pool_[t].start < start) {
      count += 1 + pool_[t].l_count;
      t = pool_[t].right;
    } else {
      t = pool_[t].left;
    }
  }
  return count;
}

// ---- size index: key (size, start) packed in SizeLink::key ----

void Allocator::s_split(uint32_t t, uint64_t key, uint32_t& l, uint32_t& r) {
  if (t == kNil) {
    l = r = kNil;
    return;
  }
  SizeLink& n = slinks_[t];
  if (n.key < key) {
    s_split(n.right, key, n.right, r);
    slinks_[t].r_count = s_count(slinks_[t].right);
    l = t;
  } else {
    s_split(n.left, key, l, n.left);
    slinks_[t].l_count = s_count(slinks_[t].left);
    r = t;
  }
}

uint32_t Allocator::s_merge(uint32_t l, uint32_t r) {
  if (l == kNil) return r;
  if (r == kNil) return l;
  if (slinks_[l].prio > slinks_[r].prio) {
    const uint32_t m = s_merge(slinks_[l].right, r);
    slinks_[l].right = m;
    slinks_[l].r_count = s_count(m);
    return l;
  }
  const uint32_t m = s_merge(l, slinks_[r].left);
  slinks_[r].left = m;
  slinks_[r].l_count = s_count(m);
  return r;
}

uint32_t Allocator::s_insert(uint32_t t, uint32_t x) {
  if (t == kNil) return x;
  if (slinks_[x].prio > slinks_[t].prio) {
    uint32_t l, r;
    s_split(t, slinks_[x].key, l, r);
    SizeLink& n = slinks_[x];
    n.left = l;
    n.right = r;
    n.l_count = s_count(l);
    n.r_count = s_count(r);
    return x;
  }
  if (slinks_[x].key < slinks_[t].key) {
    const uint32_t c = s_insert(slinks_[t].left, x);
    slinks_[t].left = c;
    slinks_[t].l_count = s_count(c);
  } else {
    const uint32_t c = s_insert(slinks_[t].right, x);
    slinks_[t].right = c;
    slinks_[t].r_count = s_count(c);
  }
  return t;
}

uint32_t Allocator::s_erase(uint32_t t, uint64_t key) {
  if (slinks_[t].key == key) return s_merge(slinks_[t].left, slinks_[t].right);
  if (key < slinks_[t].key) {
    const uint32_t c = s_erase(slinks_[t].left, key);
    slinks_[t].left = c;
    slinks_[t].l_count = s_count(c);
  } else {
    const uint32_t c = s_erase(slinks_[t].right, key);
    slinks_[t].right = c;
    slinks_[t].r_count = s_count(c);
  }
  return t;
}

uint32_t Allocator::s_lower_bound(uint64_t size) const {
  const uint64_t key = size << 32;
  uint32_t best = kNil;
  for (uint32_t t = s_root_; t != kNil;) {
    if (slinks_[t].key >= key) {
      best = t;
      t = slinks_[t].left;
    } else {
      t = slinks_[t].right;
    }
  }
  return best;
}

uint64_t Allocator::s_rank(uint64_t size) const {
  const uint64_t key = size << 32;
  uint64_t count = 0;
  for (uint32_t t = s_root_; t != kNil;) {
    const SizeLink& n = slinks_[t];
    if (n.key < key) {
      count += 1 + n.l_count;
      t = n.right;
    } else {
      t = n.left;
    }
  }
  return count;
}

uint64_t Allocator::s_key(uint32_t n) const {
  return pool_[n].size << 32 | static_cast<uint32_t>(pool_[n].start);
}

void Allocator::s_remove(uint32_t n) {
  if (sized_) s_root_ = s_erase(s_root_, slinks_[n].key);
}

void Allocator::s_add(uint32_t n) {
  if (!sized_) return;
  if (slinks_.size() < pool_.size()) slinks_.resize(pool_.size());
  SizeLink& x = slinks_[n];
  x.key = s_key(n);
  x.left = x.right = kNil;
  x.prio = next_prio();
  x.l_count = x.r_count = 0;
  s_root_ = s_insert(s_root_, n);
}

// ---- both ----

void Allocator::index_insert(uint32_t n) {
  if (addressed_) a_add(n);
  s_add(n);
}

void Allocator::index_erase(uint32_t n) {
  if (addressed_) a_root_ = a_erase(a_root_, pool_[n].start);
  s_remove(n);
}

void Allocator::idx_resize(uint32_t n, uint64_t size) {
  s_remove(n);
  pool_[n].size = size;
  if (addressed_) a_root_ = a_replace(a_root_, pool_[n].start, n);  // refresh the path
  s_add(n);
}

void Allocator::idx_takeover(uint32_t x, uint32_t old) {
  s_remove(old);
  if (addressed_) a_root_ = a_replace(a_root_, pool_[old].start, x);
  s_add(x);
}

uint64_t Allocator::largest_free() const {
  if (addressed_) return agg_max(a_root_);
  uint32_t t = s_root_;
  if (t == kNil) return 0;
  while (slinks_[t].right != kNil) t = slinks_[t].right;
  return pool_[t].size;
}

uint64_t Allocator::free_count() const {
  return addressed_ ? agg_count(a_root_) : s_count(s_root_);
}

uint32_t Allocator::free_floor(uint64_t addr) const {
  if (addressed_) return a_floor(addr);
  // Best-fit keeps no address index: walk the list (alloc_at is rare).
  for (uint32_t t = head_; t != kNil; t = pool_[t].next) {
    if (pool_[t].start + pool_[t].size > addr) return pool_[t].in_use ? kNil : t;
  }
  return kNil;
}

// In-order walks of both trees against the list's free nodes (in address order).
std::string Allocator::check_indexes(const std::vector<uint32_t>& free_list) const {
  std::vector<uint32_t> order;
  std::vector<uint32_t> stack;
  auto left = [&](bool a, uint32_t t) { return a ? pool_[t].left : slinks_[t].left; };
  auto right = [&](bool a, uint32_t t) { return a ? pool_[t].right : slinks_[t].right; };
  auto prio = [&](bool a, uint32_t t) { return a ? pool_[t].prio : slinks_[t].prio; };
  auto walk = [&](uint32_t root, bool a) -> std::string {
    order.clear();
    for (uint32_t t = root; t != kNil || !stack.empty();) {
      if (order.size() > pool_.size()) return "index has a cycle";
      if (t != kNil) {
        stack.push_back(t);
        t = left(a, t);
        continue;
      }
      t = stack.back();
      stack.pop_back();
      order.push_back(t);
      t = right(a, t);
    }
    for (uint32_t t : order) {
      for (uint32_t c : {left(a, t), right(a, t)}) {
        if (c != kNil && prio(a, c) > prio(a, t)) return "heap order broken";
      }
      const Node& n = pool_[t];
      if (a && (n.l_max != agg_max(n.left) || n.r_max != agg_max(n.right) ||
                n.l_count != agg_count(n.left) || n.r_count != agg_count(n.right))) {
        return fmt::format("aggregate wrong at node #{}", t);
      }
      if (!a && (slinks_[t].l_count != s_count(slinks_[t].left) ||
                 slinks_[t].r_count != s_count(slinks_[t].right) || slinks_[t].key != s_key(t))) {
        return fmt::format("count or key wrong at node #{}", t);
      }
    }
    return "";
  };
  if (!addressed_ && a_root_ != kNil) return "address index in use with best-fit";
  if (auto err = walk(a_root_, true); !err.empty()) return "address index: " + err;
  if (addressed_ && order != free_list) {
    return fmt::format("address index holds {} nodes, list has {} free nodes (or order differs)",
                       order.size(), free_list.size());
  }
  if (!sized_) return s_root_ == kNil ? "" : "size index in use without best-fit";
  if (auto err = walk(s_root_, false); !err.empty()) return "size index: " + err;
  if (order.size() != free_list.size()) {
    return fmt::format("size index holds {} nodes, list has {} free", order.size(),
                       free_list.size());
  }
  std::vector<char> is_free(pool_.size(), 0);
  for (uint32_t t : free_list) is_free[t] = 1;
  for (size_t i = 0; i < order.size(); ++i) {
    if (!is_free[order[i]]) return fmt::format("size index holds non-free node #{}", order[i]);
    if (i > 0 && slinks_[order[i - 1]].key >= slinks_[order[i]].key) {
      return "size index out of (size, address) order";
    }
  }
  return "";
}

}  // namespace npuforge::allocator
