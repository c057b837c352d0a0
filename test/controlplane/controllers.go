package main

// The controllers a Job's life needs, as kube-controller-manager runs them: the Job
// controller (with its pod-failure back-off lowered), the garbage collector (cascade
// deletion of a Job's pods), TTL-after-finished, and the namespace controller (so a
// test can delete its namespace).

import (
	"context"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/controller-manager/pkg/informerfactory"
	"k8s.io/kubernetes/pkg/controller/garbagecollector"
	jobcontroller "k8s.io/kubernetes/pkg/controller/job"
	namespacecontroller "k8s.io/kubernetes/pkg/controller/namespace"
	"k8s.io/kubernetes/pkg/controller/ttlafterfinished"
)

type controllerTimings struct {
	podFailureBackoff    time.Duration // the Job controller's first pod-failure back-off (10 s upstream)
	maxPodFailureBackoff time.Duration // its cap (10 min upstream)
	syncBatchPeriod      time.Duration // how long it batches pod events per Job (1 s upstream)
}

// setJobControllerTimings sets the Job controller's exported tunables; it must run
// before the controller is created.
func setJobControllerTimings(t controllerTimings) {
	jobcontroller.DefaultJobPodFailureBackOff = t.podFailureBackoff
	jobcontroller.MaxJobPodFailureBackOff = t.maxPodFailureBackoff
	jobcontroller.SyncJobBatchPeriod = t.syncBatchPeriod
}

// startControllers runs the controllers until ctx ends; it returns once their caches
// have synced.
func startControllers(ctx context.Context, cfg *rest.Config) error {
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = 200, 400
	client, err := kubernetes.NewForConfig(rest.AddUserAgent(cfg, "kube-controller-manager"))
	if err != nil {
		return err
	}
	meta, err := metadata.NewForConfig(cfg)
	if err != nil {
		return err
	}
	factory := informers.NewSharedInformerFactory(client, 0)
	metaFactory := metadatainformer.NewSharedInformerFactory(meta, 0)

	jc, err := jobcontroller.NewController(ctx, client, factory.Core().V1().Pods(),
		factory.Batch().V1().Jobs(), nil, nil)
	if err != nil {
		return fmt.Errorf("job controller: %w", err)
	}
	ttl := ttlafterfinished.New(ctx, factory.Batch().V1().Jobs(), client)
	ns := namespacecontroller.NewNamespaceController(ctx, client, meta,
		client.Discovery().ServerPreferredNamespacedResources, factory.Core().V1().Namespaces(),
		5*time.Minute, v1.FinalizerKubernetes)

	cached := memory.NewMemCacheClient(client.Discovery())
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(cached)
	started := make(chan struct{})
	gc, err := garbagecollector.NewGarbageCollector(ctx, client, meta, mapper,
		garbagecollector.DefaultIgnoredResources(),
		informerfactory.NewInformerFactory(factory, metaFactory), started)
	if err != nil {
		return fmt.Errorf("garbage collector: %w", err)
	}

	factory.Start(ctx.Done())
	metaFactory.Start(ctx.Done())
	for typ, ok := range factory.WaitForCacheSync(ctx.Done()) {
		if !ok {
			return fmt.Errorf("informer cache of %v did not sync", typ)
		}
	}
	close(started)
	go jc.Run(ctx, 5)
	go ttl.Run(ctx, 5)
	go ns.Run(ctx, 2)
	const gcSync = 5 * time.Second
	go wait.Until(mapper.Reset, gcSync, ctx.Done())
	go gc.Run(ctx, 5, gcSync)
	go gc.Sync(ctx, client.Discovery(), gcSync)
	return nil
}
