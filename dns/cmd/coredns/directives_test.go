package main

import (
	"slices"
	"testing"
)

func TestInsertAfter(t *testing.T) {
	in := []string{"errors", "kubernetes", "file", "forward"}
	got := insertAfter(in, "kubernetes", "clusterset")
	if want := []string{"errors", "kubernetes", "clusterset", "file", "forward"}; !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	if want := []string{"errors", "kubernetes", "file", "forward"}; !slices.Equal(in, want) {
		t.Errorf("the input changed to %v", in)
	}
	if got := insertAfter([]string{"errors"}, "kubernetes", "clusterset"); !slices.Equal(got, []string{"errors", "clusterset"}) {
		t.Errorf("missing anchor: got %v", got)
	}
}
