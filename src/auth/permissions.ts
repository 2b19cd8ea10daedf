import { SetMetadata, applyDecorators } from '@nestjs/common';
import { ApiExtension, ApiResponse } from '@nestjs/swagger';
import { ApiError } from 'src/common/api-error';
import { errorResponse } from 'src/common/api-error-responses';
import { ROLES, type Role } from 'src/http/actor';

/** The permissions of the contract's roles table; each admin or dashboard route declares the one it needs. */
export type Permission =
  | 'accounts:read' // read accounts and their endpoint; read the dashboard
  | 'accounts:write' // create and change accounts, enable/disable endpoints; dashboard actions
  | 'secrets:rotate' // rotate a client's secret
  | 'legal_holds:manage' // legal holds
  | 'audit:read' // read and export the audit trail
  | 'operator_keys:manage'; // operator keys

/** The contract's roles table, exactly. An operator with several roles has the union. */
export const ROLE_PERMISSIONS: Readonly<Record<Role, readonly Permission[]>> = {
  viewer: ['accounts:read'],
  operator: ['accounts:read', 'accounts:write'],
  compliance: ['accounts:read', 'legal_holds:manage', 'audit:read'],
  auditor: ['audit:read'],
  admin: [
    'accounts:read',
    'accounts:write',
    'secrets:rotate',
    'legal_holds:manage',
    'audit:read',
    'operator_keys:manage',
  ],
};

export function rolesAllow(roles: readonly Role[], permission: Permission): boolean {
  return roles.some((role) => ROLE_PERMISSIONS[role].includes(permission));
}

/** The roles that grant a permission, in the table's order. */
export function rolesGranting(permission: Permission): Role[] {
  return ROLES.filter((role) => ROLE_PERMISSIONS[role].includes(permission));
}

/** The OpenAPI extensions naming what an admin operation needs: its permission and the roles that grant it. */
export const PERMISSION_EXTENSION = 'x-permission';
export const ROLES_EXTENSION = 'x-roles';

export const REQUIRED_PERMISSION = 'kyc:required-permission';

/**
 * The permission an admin route needs; enforced by the credential guard (403 `forbidden` without it,
 * before anything runs). The OpenAPI document shows it (`x-permission`, `x-roles`, a line of the
 * operation's description) with the route's 403.
 */
export const RequiresPermission = (permission: Permission): MethodDecorator & ClassDecorator =>
  applyDecorators(
    SetMetadata(REQUIRED_PERMISSION, permission),
    ApiExtension(PERMISSION_EXTENSION, permission),
    ApiExtension(ROLES_EXTENSION, rolesGranting(permission)),
    ApiResponse({ status: 403, ...errorResponse([ApiError.forbidden(permission)]) }),
  );
