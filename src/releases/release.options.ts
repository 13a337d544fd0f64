import { ApiSchema } from '@nestjs/swagger';
import { Field } from '../common/fields';

/** The fields shared by creating and editing a release (absent fields are left as they are on edit). */
abstract class ReleaseFields {
  @Field({ field: 'Target', type: 'string', maxSize: 255, description: 'branch, tag or commit the new tag points at; the default branch when empty' })
  target_commitish?: string;

  @Field({ field: 'Title', type: 'string', maxSize: 255 })
  name?: string;

  @Field({ field: 'Note', type: 'string' })
  body?: string;

  @Field({ field: 'IsDraft', type: 'boolean' })
  draft?: boolean;

  @Field({ field: 'IsPrerelease', type: 'boolean' })
  prerelease?: boolean;

  @Field({ field: 'HideArchiveLinks', type: 'boolean' })
  hide_archive_links?: boolean;
}

/** Body of POST /repos/{owner}/{repo}/releases. */
@ApiSchema({ name: 'CreateReleaseOption' })
export class CreateReleaseOption extends ReleaseFields {
  @Field({ field: 'TagName', type: 'string', required: true, maxSize: 255 })
  tag_name: string;
}

/** Body of PATCH /repos/{owner}/{repo}/releases/{id}. */
@ApiSchema({ name: 'EditReleaseOption' })
export class EditReleaseOption extends ReleaseFields {
  @Field({ field: 'TagName', type: 'string', maxSize: 255 })
  tag_name?: string;
}

/** Body of PATCH /repos/{owner}/{repo}/releases/{id}/assets/{attachment_id}. */
@ApiSchema({ name: 'EditAttachmentOptions' })
export class EditAttachmentOption {
  @Field({ field: 'Name', type: 'string', maxSize: 255 })
  name?: string;

  @Field({ field: 'DownloadURL', type: 'string', maxSize: 2048, description: '(Can only be set if existing attachment is of external type)' })
  browser_download_url?: string;
}
