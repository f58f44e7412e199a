// Checks Gateway API HTTPRoutes (a JSON array on stdin) against the Gateway API's schemas as
// compiled into @kubernetes-models/gateway-api (types, required fields, enums, patterns, limits).
// Prints "INDEX<TAB>error" per problem and exits 1 if there was any. Unlike the core schemas
// these do not refuse unknown fields: tests/kubernetes.rs pins the route's fields instead.
import { readFileSync } from "node:fs";
import { HTTPRoute } from "@kubernetes-models/gateway-api/gateway.networking.k8s.io/v1/HTTPRoute";

const routes = JSON.parse(readFileSync(0, "utf8"));
let failed = false;
routes.forEach((data, index) => {
  if (data.apiVersion !== HTTPRoute.apiVersion) {
    console.log(`${index}\tapiVersion ${data.apiVersion}: only ${HTTPRoute.apiVersion} is checked`);
    failed = true;
    return;
  }
  try {
    new HTTPRoute(data).validate();
  } catch (error) {
    failed = true;
    for (const line of String(error.message).split(/, (?=data)/)) {
      console.log(`${index}\t${line.replace(/^data\//, "").replaceAll("/", ".")}`);
    }
  }
});
process.exit(failed ? 1 : 0);
