package sim

import (
	"container/list"
	"hash/fnv"
)

// blockSize is the prefix cache's block in tokens, vLLM's default.
const blockSize = 16

// blockHashes returns one hash per full block of tokens, each covering the
// whole prefix up to the end of its block (as vLLM's block hashes chain the
// parent's hash).
func blockHashes(tokens []string) []uint64 {
	n := len(tokens) / blockSize
	if n == 0 {
		return nil
	}
	out := make([]uint64, 0, n)
	var parent uint64
	for b := range n {
		h := fnv.New64a()
		var pb [8]byte
		for i := range pb {
			pb[i] = byte(parent >> (8 * i))
		}
		h.Write(pb[:])
		for _, t := range tokens[b*blockSize : (b+1)*blockSize] {
			h.Write([]byte(t))
			h.Write([]byte{0})
		}
		parent = h.Sum64()
		out = append(out, parent)
	}
	return out
}

// prefixCache is an LRU set of computed blocks. The step loop owns it.
type prefixCache struct {
	capacity int
	lru      *list.List // front = most recent; values are uint64 hashes
	index    map[uint64]*list.Element
}

func newPrefixCache(capacityBlocks int) *prefixCache {
	return &prefixCache{capacity: max(capacityBlocks, 1), lru: list.New(), index: map[uint64]*list.Element{}}
}

// lookup returns how many leading blocks are cached, marking them used.
func (c *prefixCache) lookup(blocks []uint64) int {
	n := 0
	for _, b := range blocks {
		e, ok := c.index[b]
		if !ok {
			break
		}
		c.lru.MoveToFront(e)
		n++
	}
	return n
}

// insert records blocks as computed, evicting the least recently used.
func (c *prefixCache) insert(blocks []uint64) {
	for _, b := range blocks {
		if e, ok := c.index[b]; ok {
			c.lru.MoveToFront(e)
			continue
		}
		c.index[b] = c.lru.PushFront(b)
		for c.lru.Len() > c.capacity {
			old := c.lru.Back()
			c.lru.Remove(old)
			delete(c.index, old.Value.(uint64))
		}
	}
}
