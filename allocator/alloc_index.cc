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
    uint32_t rl;
    a_split(pool_[t].right, start, rl, r);
    set_right(t, rl);
    fix_right(t);
    l = t;
  } else {
    uint32_t lr;
    a_split(pool_[t].left, start, l, lr);
    set_left(t, lr);
    fix_left(t);
    r = t;
  }
}

uint32_t Allocator::a_merge(uint32_t l, uint32_t r) {
  if (l == kNil) return r;
  if (r == kNil) return l;
  if (pool_[l].prio > pool_[r].prio) {
    set_right(l, a_merge(pool_[l].right, r));
    fix_right(l);
    return l;
  }
  set_left(r, a_merge(l, pool_[r].left));
  fix_left(r);
  return r;
}

// Top-down, without recursion: every node passed on the way gains x in the subtree on x's
// side, so its count and largest size are updated as the descent passes; where x's priority
// wins, the rest of the subtree is split around x's start.
void Allocator::a_insert(uint32_t x) {
  const uint64_t start = pool_[x].start;
  const auto size = static_cast<uint32_t>(pool_[x].size);
  const uint32_t prio = pool_[x].prio;
  uint32_t parent = kNil, t = a_root_;
  bool left_of_parent = false;
  while (t != kNil && pool_[t].prio >= prio) {
    Node& n = pool_[t];
    parent = t;
    left_of_parent = start < n.start;
    if (left_of_parent) {
      n.l_count++;
      n.l_max = std::max(n.l_max, size);
      t = n.left;
    } else {
      n.r_count++;
      n.r_max = std::max(n.r_max, size);
      t = n.right;
    }
  }
  uint32_t l, r;
  a_split(t, start, l, r);
  set_left(x, l);
  set_right(x, r);
  fix_left(x);
  fix_right(x);
  if (parent == kNil) {
    set_a_root(x);
  } else if (left_of_parent) {
    set_left(parent, x);
  } else {
    set_right(parent, x);
  }
}

void Allocator::a_add(uint32_t n) {
  Node& x = pool_[n];
  x.left = x.right = kNil;
  x.l_max = x.r_max = x.l_count = x.r_count = 0;
  x.prio = next_prio();
  a_insert(n);
}

// By the parent links: n's children merge into its place, then every ancestor loses one
// node on n's side and refreshes that side's largest size.
void Allocator::a_erase(uint32_t n) {
  const uint32_t parent = pool_[n].parent;
  const uint32_t c = a_merge(pool_[n].left, pool_[n].right);
  if (parent == kNil) {
    set_a_root(c);
    return;
  }
  Node& pn = pool_[parent];
  if (pn.left == n) {
    set_left(parent, c);
    pn.l_count--;
    pn.l_max = static_cast<uint32_t>(agg_max(c));
  } else {
    set_right(parent, c);
    pn.r_count--;
    pn.r_max = static_cast<uint32_t>(agg_max(c));
  }
  for (uint32_t below = parent, p = pn.parent; p != kNil; below = p, p = pool_[p].parent) {
    Node& a = pool_[p];
    const auto max = static_cast<uint32_t>(agg_max(below));
    if (a.left == below) {
      a.l_count--;
      a.l_max = max;
    } else {
      a.r_count--;
      a.r_max = max;
    }
  }
}

// Upwards from n by the parent links, after n's size changed in place: the subtrees keep
// their node counts, so only the largest-size aggregates can change, and they stop
// changing after a few levels (most ancestors' maxima are set by other nodes).
void Allocator::a_refresh(uint32_t n) {
  for (uint32_t c = n, p = pool_[n].parent; p != kNil; c = p, p = pool_[p].parent) {
    Node& pn = pool_[p];
    const auto max = static_cast<uint32_t>(agg_max(c));
    uint32_t& side = pn.left == c ? pn.l_max : pn.r_max;
    if (side == max) break;  // nothing above changes either
    side = max;
  }
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

// Without recursion or a stack: the descent toward `from` ends below the lowest free node
// at or after it; from there the in-order walk goes node, its right subtree, then up by the
// parent links to the next ancestor entered from the left, and so on. A right subtree is
// entered only when its largest size fits, so the first fit inside it is certain.
uint32_t Allocator::a_first_fit_from(uint32_t t, uint64_t from, uint64_t size) const {
  if (agg_max(t) < size) return kNil;
  uint32_t at = kNil;
  while (t != kNil) {
    const Node& n = pool_[t];
    if (n.start < from) {
      t = n.right;
    } else {
      at = t;
      t = n.left;
    }
  }
  while (at != kNil) {
    const Node& n = pool_[at];
    if (n.size >= size) return at;
    if (n.r_max >= size) return a_first_fit(n.right, size);
    uint32_t c = at;
    for (at = n.parent; at != kNil && pool_[at].left != c; at = pool_[at].parent) c = at;
  }
  return kNil;
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
  if (slinks_[t].key < key) {
    uint32_t rl;
    s_split(slinks_[t].right, key, rl, r);
    s_set_right(t, rl);
    l = t;
  } else {
    uint32_t lr;
    s_split(slinks_[t].left, key, l, lr);
    s_set_left(t, lr);
    r = t;
  }
}

uint32_t Allocator::s_merge(uint32_t l, uint32_t r) {
  if (l == kNil) return r;
  if (r == kNil) return l;
  if (slinks_[l].prio > slinks_[r].prio) {
    s_set_right(l, s_merge(slinks_[l].right, r));
    return l;
  }
  s_set_left(r, s_merge(l, slinks_[r].left));
  return r;
}

// Top-down like a_insert: the nodes passed gain one on x's side.
void Allocator::s_insert(uint32_t x) {
  const uint64_t key = slinks_[x].key;
  const uint32_t prio = slinks_[x].prio;
  uint32_t parent = kNil, t = s_root_;
  bool left_of_parent = false;
  while (t != kNil && slinks_[t].prio >= prio) {
    SizeLink& n = slinks_[t];
    parent = t;
    left_of_parent = key < n.key;
    if (left_of_parent) {
      n.l_count++;
      t = n.left;
    } else {
      n.r_count++;
      t = n.right;
    }
  }
  uint32_t l, r;
  s_split(t, key, l, r);
  s_set_left(x, l);
  s_set_right(x, r);
  if (parent == kNil) {
    s_root_ = x;
    slinks_[x].parent = kNil;
  } else if (left_of_parent) {
    s_set_left(parent, x);
  } else {
    s_set_right(parent, x);
  }
}

// Like a_erase: n's children merge into its place; every ancestor loses one on n's side.
void Allocator::s_erase(uint32_t n) {
  uint32_t below = n, p = slinks_[n].parent;
  const uint32_t c = s_merge(slinks_[n].left, slinks_[n].right);
  if (p == kNil) {
    s_root_ = c;
    if (c != kNil) slinks_[c].parent = kNil;
    return;
  }
  if (slinks_[p].left == n) {
    s_set_left(p, c);
  } else {
    s_set_right(p, c);
  }
  for (below = p, p = slinks_[p].parent; p != kNil; below = p, p = slinks_[p].parent) {
    SizeLink& a = slinks_[p];
    if (a.left == below) {
      a.l_count--;
    } else {
      a.r_count--;
    }
  }
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
  if (sized_) s_erase(n);
}

void Allocator::s_add(uint32_t n) {
  if (!sized_) return;
  if (slinks_.size() < pool_.size()) slinks_.resize(pool_.size());
  SizeLink& x = slinks_[n];
  x.key = s_key(n);
  x.left = x.right = kNil;
  x.prio = next_prio();
  x.l_count = x.r_count = 0;
  s_insert(n);
}

// ---- both ----

void Allocator::index_insert(uint32_t n) {
  if (addressed_) a_add(n);
  s_add(n);
}

void Allocator::index_erase(uint32_t n) {
  if (addressed_) a_erase(n);
  s_remove(n);
}

void Allocator::idx_resize(uint32_t n, uint64_t start, uint64_t size) {
  s_remove(n);
  pool_[n].start = start;
  pool_[n].size = size;
  if (addressed_) a_refresh(n);
  s_add(n);
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
        if (c != kNil && (a ? pool_[c].parent : slinks_[c].parent) != t) {
          return fmt::format("parent link wrong at node #{}", c);
        }
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
  if (a_root_ != kNil && pool_[a_root_].parent != kNil) return "address index: root has a parent";
  if (auto err = walk(a_root_, true); !err.empty()) return "address index: " + err;
  if (addressed_ && order != free_list) {
    return fmt::format("address index holds {} nodes, list has {} free nodes (or order differs)",
                       order.size(), free_list.size());
  }
  if (!sized_) return s_root_ == kNil ? "" : "size index in use without best-fit";
  if (s_root_ != kNil && slinks_[s_root_].parent != kNil) return "size index: root has a parent";
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
