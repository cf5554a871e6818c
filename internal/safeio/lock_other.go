//go:build !unix || aix || solaris || illumos

package safeio

import (
	"os"
	"sync"
)

// Where flock is missing, the lock serialises the goroutines of one process
// only: perfgate is tested on Linux and macOS.
var processLocks sync.Map // path of the file -> *sync.Mutex

func tryLock(f *os.File) (bool, error) {
	mu, _ := processLocks.LoadOrStore(f.Name(), new(sync.Mutex))
	return mu.(*sync.Mutex).TryLock(), nil
}

func unlock(f *os.File) {
	if mu, ok := processLocks.Load(f.Name()); ok {
		mu.(*sync.Mutex).Unlock()
	}
}
