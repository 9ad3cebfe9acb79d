// The ValidatingAdmissionPolicy that bounds what the worker's own identity can change (I7): RBAC can only say "Services
// and EndpointSlices in every namespace", so the apiserver itself checks, for requests of the worker's ServiceAccount,
// that the object was ours before (UPDATE, DELETE) and is still ours after (CREATE, UPDATE). A bug or a stolen token
// then cannot touch a user's Service or a kube-system EndpointSlice. Rendered into kustomize/base and the Helm chart by
// `npm run manifests`, from the same label constants the worker writes with.
import {
  CONTROLLER_NAME,
  DERIVED_SERVICE_PREFIX,
  LABEL_CREATED_BY,
  LABEL_KUBE_SERVICE_NAME,
  LABEL_MANAGED_BY,
  WORKER_SERVICE_ACCOUNT,
} from '../src/core/names.ts';

export const WORKER_POLICY_NAME = 'mcs-cloudmap-worker-writes';

const label = (object: string, key: string) => `${object}.metadata.labels[${JSON.stringify(key)}]`;
const hasLabel = (object: string, key: string, value: string) =>
  `(${JSON.stringify(key)} in ${object}.metadata.labels && ${label(object, key)} == ${JSON.stringify(value)})`;

/**
 * CEL: `object` (a Service or EndpointSlice, possibly null) was made by the worker. Slices must also stay with our
 * EndpointSlice controller name and point at a derived Service, so the worker cannot add endpoints to a user's Service.
 */
function ours(object: string): string {
  const slice = [
    hasLabel(object, LABEL_MANAGED_BY, CONTROLLER_NAME),
    `${JSON.stringify(LABEL_KUBE_SERVICE_NAME)} in ${object}.metadata.labels`,
    `${label(object, LABEL_KUBE_SERVICE_NAME)}.startsWith(${JSON.stringify(DERIVED_SERVICE_PREFIX)})`,
  ];
  return (
    `${object} != null && has(${object}.metadata.labels) && ${hasLabel(object, LABEL_CREATED_BY, CONTROLLER_NAME)}` +
    ` && (request.resource.resource != 'endpointslices' || (${slice.join(' && ')}))`
  );
}

const what = `only Services and EndpointSlices labelled ${LABEL_CREATED_BY}=${CONTROLLER_NAME}`;

/** The policy and its binding (Deny); `serviceAccount` is the worker's username as the apiserver sees it. */
export function workerPolicy(serviceAccount: string = WORKER_SERVICE_ACCOUNT): Record<string, unknown>[] {
  return [
    {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingAdmissionPolicy',
      metadata: { name: WORKER_POLICY_NAME },
      spec: {
        // The policy is evaluated in the apiserver: no webhook to be down, so failing closed costs nothing.
        failurePolicy: 'Fail',
        matchConstraints: {
          resourceRules: [
            {
              apiGroups: [''],
              apiVersions: ['*'],
              operations: ['CREATE', 'UPDATE', 'DELETE'],
              resources: ['services'],
            },
            {
              apiGroups: ['discovery.k8s.io'],
              apiVersions: ['*'],
              operations: ['CREATE', 'UPDATE', 'DELETE'],
              resources: ['endpointslices'],
            },
          ],
        },
        matchConditions: [
          { name: 'worker', expression: `request.userInfo.username == ${JSON.stringify(serviceAccount)}` },
        ],
        validations: [
          {
            expression: `request.operation == 'CREATE' || (${ours('oldObject')})`,
            reason: 'Forbidden',
            messageExpression: `'the mcs-cloudmap worker may change or delete ${what} (I7); ' + request.resource.resource + ' ' + request.namespace + '/' + request.name + ' is not one'`,
          },
          {
            expression: `request.operation == 'DELETE' || (${ours('object')})`,
            reason: 'Forbidden',
            messageExpression: `'the mcs-cloudmap worker may write ${what}, and never remove the label (I7): ' + request.resource.resource + ' ' + request.namespace + '/' + request.name`,
          },
        ],
      },
    },
    {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingAdmissionPolicyBinding',
      metadata: { name: WORKER_POLICY_NAME },
      spec: { policyName: WORKER_POLICY_NAME, validationActions: ['Deny'] },
    },
  ];
}
