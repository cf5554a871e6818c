//go:build !unix

package run

import "errors"

func getNofile() (soft, hard uint64, err error) {
	return 0, 0, errors.New("no open-file limit to read on this system")
}

func setNofile(soft, hard uint64) error {
	return errors.New("no open-file limit to set on this system")
}
