//go:build !linux

package confine

import "errors"

func become(Spec, string, []string) error {
	return errors.New("confining a server needs Linux")
}
