interface ExpressLayer {
  route?: { methods: Record<string, boolean> };
  match(path: string): boolean;
}

interface ExpressAppLike {
  router?: { stack: ExpressLayer[] };
}

function safeMatch(layer: ExpressLayer, path: string): boolean {
  try {
    return layer.match(path);
  } catch {
    return false; // a malformed percent-encoding in the path
  }
}

/** Methods the app serves for a path, so an unknown method on a known route is 405, not 404. */
export function allowedMethods(app: unknown, path: string): string[] {
  const stack = (app as ExpressAppLike).router?.stack ?? [];
  const methods = new Set<string>();
  for (const layer of stack) {
    if (!layer.route) continue;
    if (!safeMatch(layer, path)) continue;
    for (const [method, enabled] of Object.entries(layer.route.methods)) {
      if (enabled && method !== '_all') methods.add(method.toUpperCase());
    }
  }
  return [...methods].sort();
}
