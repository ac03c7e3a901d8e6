package app

import "fmt"

// renderKustomize renders the kustomize base.
func (a *App) renderKustomize(target string) ([]Object, error) {
	return nil, fmt.Errorf("target %s: kustomize bases are not supported yet", target)
}
