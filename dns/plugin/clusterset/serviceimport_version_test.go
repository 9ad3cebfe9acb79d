package clusterset

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
)

func TestChooseServiceImportVersion(t *testing.T) {
	tests := []struct {
		served  map[string]bool
		want    string
		wantErr bool
	}{
		{map[string]bool{"v1beta1": true, "v1alpha1": true}, "v1beta1", false},
		{map[string]bool{"v1alpha1": true}, "v1alpha1", false},
		{map[string]bool{"v1beta1": true}, "v1beta1", false},
		{map[string]bool{}, "v1beta1", true},
	}
	for _, tt := range tests {
		got, err := chooseServiceImportVersion(tt.served)
		if got != tt.want || (err != nil) != tt.wantErr {
			t.Errorf("chooseServiceImportVersion(%v) = %q, %v; want %q, error %v", tt.served, got, err, tt.want, tt.wantErr)
		}
	}
}

// discoveryServer answers the discovery documents of multicluster.x-k8s.io: status per group version, 200 with a
// resource list naming serviceimports.
func discoveryServer(t *testing.T, status map[string]int) discovery.DiscoveryInterface {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		version := strings.TrimPrefix(r.URL.Path, "/apis/multicluster.x-k8s.io/")
		code, ok := status[version]
		if !ok {
			code = http.StatusNotFound
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		if code == http.StatusOK {
			fmt.Fprintf(w, `{"kind":"APIResourceList","apiVersion":"v1","groupVersion":"multicluster.x-k8s.io/%s","resources":[{"name":"serviceimports","namespaced":true,"kind":"ServiceImport","verbs":["list","watch"]}]}`, version)
		}
	}))
	t.Cleanup(srv.Close)
	d, err := discovery.NewDiscoveryClientForConfig(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestServiceImportResourceOverHTTP(t *testing.T) {
	tests := []struct {
		name    string
		status  map[string]int
		version string
		errText string
	}{
		{"both served", map[string]int{"v1beta1": 200, "v1alpha1": 200}, "v1beta1", ""},
		{"only v1alpha1 served", map[string]int{"v1alpha1": 200}, "v1alpha1", ""},
		{"none served", map[string]int{}, "v1beta1", "install the MCS CRDs"},
		{"server failing", map[string]int{"v1beta1": 500, "v1alpha1": 500}, "v1beta1", "could not ask the API server"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gvr, err := serviceImportResource(discoveryServer(t, tt.status))
			if gvr.Version != tt.version || gvr.Resource != "serviceimports" || gvr.Group != multiclusterGroup {
				t.Errorf("got %v, want version %s", gvr, tt.version)
			}
			if (tt.errText == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tt.errText)) {
				t.Errorf("error %v, want one containing %q", err, tt.errText)
			}
		})
	}
}
