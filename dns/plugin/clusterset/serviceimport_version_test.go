package clusterset

import "testing"

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
