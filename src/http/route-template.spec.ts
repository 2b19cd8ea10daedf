import type { Request } from 'express';
import { routeTemplate } from 'src/http/route-template';

type RouteInput = Pick<Request, 'route' | 'baseUrl' | 'originalUrl'>;

const unmatched = (originalUrl: string): RouteInput => ({ baseUrl: '', route: undefined, originalUrl }) as RouteInput;

describe('routeTemplate', () => {
  it('joins the mount path and the route pattern', () => {
    expect(
      routeTemplate({
        baseUrl: '',
        route: { path: '/api/v1/public/kyc/verifications/:id' },
        originalUrl: '/api/v1/public/kyc/verifications/0193a6f2-0000-7000-8000-000000000000',
      } as RouteInput),
    ).toBe('/api/v1/public/kyc/verifications/:id');
    expect(
      routeTemplate({ baseUrl: '/admin', route: { path: '/queues' }, originalUrl: '/admin/queues' } as RouteInput),
    ).toBe('/admin/queues');
  });

  it("labels a mount with its declared (lower-case) path, whatever the request's letter case", () => {
    const labels = ['/admin/queues', '/ADMIN/Queues', '/Admin/QUEUES'].map((mount) =>
      routeTemplate({
        baseUrl: mount,
        route: { path: '/api/queues' },
        originalUrl: `${mount}/api/queues`,
      } as RouteInput),
    );
    expect(new Set(labels)).toEqual(new Set(['/admin/queues/api/queues']));
    expect(routeTemplate(unmatched('/ADMIN/Queues/static/js/main.js'))).toBe('/admin/queues/static');
  });

  it('labels unmatched requests with one value, never the raw URL', () => {
    expect(routeTemplate(unmatched('/no/such/route?x=1'))).toBe('unmatched');
    expect(routeTemplate({ baseUrl: '', route: undefined } as RouteInput)).toBe('unmatched');
  });

  it("labels a static file with its mount: Swagger UI's assets, the queue dashboard's", () => {
    expect(routeTemplate(unmatched('/api/docs/swagger-ui-bundle.js'))).toBe('/api/docs');
    expect(routeTemplate(unmatched('/api/docs/docs/swagger-ui.css?v=1'))).toBe('/api/docs');
    expect(routeTemplate(unmatched('/admin/queues/static/js/main.js'))).toBe('/admin/queues/static');
  });

  it('does not take a path that only starts like a mount for it', () => {
    expect(routeTemplate(unmatched('/api/docsxyz'))).toBe('unmatched');
    expect(routeTemplate(unmatched('/api/docs-other/file.js'))).toBe('unmatched');
    expect(routeTemplate(unmatched('/x/api/docs/file.js'))).toBe('unmatched');
  });
});
