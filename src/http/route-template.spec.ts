import type { Request } from 'express';
import { routeTemplate } from 'src/http/route-template';

describe('routeTemplate', () => {
  it('joins the mount path and the route pattern', () => {
    expect(
      routeTemplate({ baseUrl: '', route: { path: '/api/v1/public/kyc/verifications/:id' } } as Pick<
        Request,
        'route' | 'baseUrl'
      >),
    ).toBe('/api/v1/public/kyc/verifications/:id');
    expect(routeTemplate({ baseUrl: '/admin', route: { path: '/queues' } } as Pick<Request, 'route' | 'baseUrl'>)).toBe(
      '/admin/queues',
    );
  });

  it('labels unmatched requests with one value, never the raw URL', () => {
    expect(routeTemplate({ baseUrl: '', route: undefined } as Pick<Request, 'route' | 'baseUrl'>)).toBe('unmatched');
  });
});
