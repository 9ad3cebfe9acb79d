package clusterset

import (
	"cmp"
	"slices"
	"sync/atomic"
	"time"

	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	discoveryinformers "k8s.io/client-go/informers/discovery/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
)

// byService indexes MCS EndpointSlices by "<namespace>/<service-name label>".
const byService = "mcs-service"

// store is the Source backed by client-go informers: ServiceImports (dynamic client, the version discovery chose),
// EndpointSlices labelled multicluster.kubernetes.io/service-name, and Namespaces (metadata only).
type store struct {
	imports    cache.SharedIndexInformer
	slices     cache.SharedIndexInformer
	namespaces cache.SharedIndexInformer
	changed    atomic.Int64 // Unix seconds of the last change seen: the SOA serial
	stop       chan struct{}
}

func newStore(rc *rest.Config, serviceImports schema.GroupVersionResource) (*store, error) {
	dyn, err := dynamic.NewForConfig(rc)
	if err != nil {
		return nil, err
	}
	typed, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return nil, err
	}
	md, err := metadata.NewForConfig(rc)
	if err != nil {
		return nil, err
	}
	s := &store{stop: make(chan struct{})}
	s.imports = dynamicinformer.NewFilteredDynamicInformer(dyn, serviceImports, metav1.NamespaceAll, 0,
		cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc}, nil).Informer()
	s.slices = discoveryinformers.NewFilteredEndpointSliceInformer(typed, metav1.NamespaceAll, 0,
		cache.Indexers{byService: serviceIndex},
		func(o *metav1.ListOptions) { o.LabelSelector = labelServiceName })
	s.namespaces = metadatainformer.NewFilteredMetadataInformer(md, schema.GroupVersionResource{Version: "v1", Resource: "namespaces"},
		metav1.NamespaceAll, 0, cache.Indexers{}, nil).Informer()
	s.changed.Store(time.Now().Unix())
	for _, inf := range []cache.SharedIndexInformer{s.imports, s.slices, s.namespaces} {
		if err := inf.SetTransform(dropManagedFields); err != nil {
			return nil, err
		}
		if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc:    func(any) { s.touch() },
			UpdateFunc: func(any, any) { s.touch() },
			DeleteFunc: func(any) { s.touch() },
		}); err != nil {
			return nil, err
		}
	}
	return s, nil
}

func (s *store) touch() { s.changed.Store(time.Now().Unix()) }

// start runs the informers until shutdown.
func (s *store) start() {
	go s.imports.Run(s.stop)
	go s.slices.Run(s.stop)
	go s.namespaces.Run(s.stop)
}

func (s *store) shutdown() { close(s.stop) }

// waitForSync waits at most timeout for the first full listing, so a restarted server answers at once.
func (s *store) waitForSync(timeout time.Duration) bool {
	stop := make(chan struct{})
	timer := time.AfterFunc(timeout, func() { close(stop) })
	defer timer.Stop()
	return cache.WaitForCacheSync(stop, s.imports.HasSynced, s.slices.HasSynced, s.namespaces.HasSynced)
}

// Synced implements Source.
func (s *store) Synced() bool {
	return s.imports.HasSynced() && s.slices.HasSynced() && s.namespaces.HasSynced()
}

// Serial implements Source.
func (s *store) Serial() uint32 { return uint32(s.changed.Load()) }

// ServiceImport implements View.
func (s *store) ServiceImport(namespace, name string) (Import, bool) {
	obj, ok, err := s.imports.GetStore().GetByKey(namespace + "/" + name)
	if err != nil || !ok {
		return Import{}, false
	}
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return Import{}, false
	}
	return importFromObject(u), true
}

// EndpointSlices implements View; slices come ordered by source cluster, then name.
func (s *store) EndpointSlices(namespace, name string) []Slice {
	objs, err := s.slices.GetIndexer().ByIndex(byService, namespace+"/"+name)
	if err != nil {
		return nil
	}
	list := make([]*discoveryv1.EndpointSlice, 0, len(objs))
	for _, obj := range objs {
		if es, ok := obj.(*discoveryv1.EndpointSlice); ok {
			list = append(list, es)
		}
	}
	slices.SortFunc(list, func(a, b *discoveryv1.EndpointSlice) int {
		return cmp.Or(cmp.Compare(a.Labels[labelSourceCluster], b.Labels[labelSourceCluster]), cmp.Compare(a.Name, b.Name))
	})
	out := make([]Slice, 0, len(list))
	for _, es := range list {
		out = append(out, sliceFromEndpointSlice(es))
	}
	return out
}

// NamespaceExists implements View.
func (s *store) NamespaceExists(namespace string) bool {
	_, ok, err := s.namespaces.GetStore().GetByKey(namespace)
	return err == nil && ok
}

func serviceIndex(obj any) ([]string, error) {
	es, ok := obj.(*discoveryv1.EndpointSlice)
	if !ok {
		return nil, nil
	}
	return []string{es.Namespace + "/" + es.Labels[labelServiceName]}, nil
}

// dropManagedFields keeps managedFields, which DNS never reads, out of the caches.
func dropManagedFields(obj any) (any, error) {
	if m, err := meta.Accessor(obj); err == nil {
		m.SetManagedFields(nil)
	}
	return obj, nil
}
