package clusterset

import (
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
)

const multiclusterGroup = "multicluster.x-k8s.io"

// serviceImportVersions in order of preference: the storage version first (K1), then the older one that clusters
// with older MCS CRDs serve.
var serviceImportVersions = []string{"v1beta1", "v1alpha1"}

// serviceImportResource asks the API server which version of ServiceImport it serves, preferring v1beta1.
func serviceImportResource(d discovery.DiscoveryInterface) (schema.GroupVersionResource, error) {
	served := map[string]bool{}
	var unreachable error
	for _, version := range serviceImportVersions {
		list, err := d.ServerResourcesForGroupVersion(multiclusterGroup + "/" + version)
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			unreachable = err
			continue
		}
		for _, r := range list.APIResources {
			if r.Name == "serviceimports" {
				served[version] = true
			}
		}
	}
	version, err := chooseServiceImportVersion(served)
	if err != nil && unreachable != nil {
		err = fmt.Errorf("could not ask the API server which ServiceImport versions it serves: %w", unreachable)
	}
	return schema.GroupVersionResource{Group: multiclusterGroup, Version: version, Resource: "serviceimports"}, err
}

// chooseServiceImportVersion picks the preferred served version; with none served it returns the preferred one and
// an error telling the operator to install the CRD.
func chooseServiceImportVersion(served map[string]bool) (string, error) {
	for _, version := range serviceImportVersions {
		if served[version] {
			return version, nil
		}
	}
	return serviceImportVersions[0], fmt.Errorf("the API server serves no ServiceImport (%s %v): install the MCS CRDs (crds/serviceimports.yaml)", multiclusterGroup, serviceImportVersions)
}
