import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { UserWire } from '../users/user.wire';

@ApiSchema({ name: 'Permission' })
export class PermissionWire {
  @ApiProperty() admin: boolean;
  @ApiProperty() push: boolean;
  @ApiProperty() pull: boolean;
}

/** The `Repository` JSON (behaviour 2.4), fields in Forgejo's order. */
@ApiSchema({ name: 'Repository' })
export class RepositoryWire {
  @ApiProperty({ format: 'int64' }) id: number;
  @ApiProperty({ type: UserWire }) owner: UserWire;
  @ApiProperty() name: string;
  @ApiProperty() full_name: string;
  @ApiProperty() description: string;
  @ApiProperty() empty: boolean;
  @ApiProperty() private: boolean;
  @ApiProperty({ description: 'always false: forking is out of scope' }) fork: boolean;
  @ApiProperty() template: boolean;
  @ApiProperty({ type: Object, nullable: true, description: 'always null: forking is out of scope' }) parent: null;
  @ApiProperty() mirror: boolean;
  @ApiProperty({ format: 'int64', description: 'KiB' }) size: number;
  @ApiProperty() html_url: string;
  @ApiProperty() url: string;
  @ApiProperty() ssh_url: string;
  @ApiProperty() clone_url: string;
  @ApiProperty() original_url: string;
  @ApiProperty() website: string;
  @ApiProperty({ format: 'int64' }) stars_count: number;
  @ApiProperty({ format: 'int64' }) forks_count: number;
  @ApiProperty({ format: 'int64' }) watchers_count: number;
  @ApiProperty({ format: 'int64' }) open_issues_count: number;
  @ApiProperty() default_branch: string;
  @ApiProperty() archived: boolean;
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ format: 'date-time' }) updated_at: string;
  @ApiProperty({ type: PermissionWire }) permissions: PermissionWire;
  @ApiProperty({ description: 'a public repository of a private owner' }) internal: boolean;
  @ApiProperty({ example: '8h0m0s' }) mirror_interval: string;
  @ApiProperty({ format: 'date-time' }) mirror_updated: string;
  @ApiProperty({ enum: ['sha1', 'sha256'] }) object_format_name: string;
  @ApiProperty({ type: [String] }) topics: string[];
}

/** `GET /repos/search` answer (behaviour 2.9). */
@ApiSchema({ name: 'SearchResults' })
export class SearchResultsWire {
  @ApiProperty() ok: boolean;
  @ApiProperty({ type: [RepositoryWire] }) data: RepositoryWire[];
}

@ApiSchema({ name: 'SearchError' })
export class SearchErrorWire {
  @ApiProperty() ok: boolean;
  @ApiProperty() error: string;
}

/** The watch status of one repository (behaviour 2.8). */
@ApiSchema({ name: 'WatchInfo' })
export class WatchInfoWire {
  @ApiProperty() subscribed: boolean;
  @ApiProperty() ignored: boolean;
  @ApiProperty({ nullable: true, type: Object }) reason: null;
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty() url: string;
  @ApiProperty() repository_url: string;
}
