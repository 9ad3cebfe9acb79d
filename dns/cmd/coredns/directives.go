package main

import "slices"

// insertAfter returns directives with name placed right after anchor (at the end when anchor is missing). The order
// of this list, not of the Corefile, is the order plugins see a query in.
func insertAfter(directives []string, anchor, name string) []string {
	i := slices.Index(directives, anchor)
	if i < 0 {
		return append(slices.Clone(directives), name)
	}
	return slices.Insert(slices.Clone(directives), i+1, name)
}
