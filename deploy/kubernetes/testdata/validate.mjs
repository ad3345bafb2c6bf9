// Validates Kubernetes manifests offline against the Kubernetes OpenAPI
// schema, as compiled into the pinned kubernetes-models package: field
// types and required fields (not unknown fields: the schema allows them).
// `node validate.mjs FILE...` prints one line per object and exits 1 when
// one is invalid. NODE_MODULES names the node_modules directory.
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const modules = process.env.NODE_MODULES;
const { parseAllDocuments } = await import(pathToFileURL(path.join(modules, 'yaml', 'dist', 'index.js')));

// kubernetes-models lays out apiVersion "apps/v1" as apps/v1, and the core
// group's "v1" as v1.
const modelFile = (apiVersion, kind) =>
  path.join(modules, 'kubernetes-models', ...apiVersion.split('/'), kind + '.js');

let invalid = 0;
for (const file of process.argv.slice(2)) {
  for (const doc of parseAllDocuments(fs.readFileSync(file, 'utf8'))) {
    const obj = doc.toJS();
    if (!obj || obj.apiVersion?.startsWith('kustomize.config.k8s.io/')) continue;
    const where = `${path.basename(file)}: ${obj.kind} ${obj.metadata?.name}`;
    try {
      const model = await import(pathToFileURL(modelFile(obj.apiVersion, obj.kind)));
      new model[obj.kind](obj).validate();
      console.log(`${where}: valid`);
    } catch (e) {
      invalid++;
      console.log(`${where}: ${e.message}`);
    }
  }
}
process.exit(invalid ? 1 : 0);
