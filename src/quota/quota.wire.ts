import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';

/** `QuotaRuleInfo` (docs/quota.md): `name` only in the admin views, `subjects` omitted when empty. */
@ApiSchema({ name: 'QuotaRuleInfo' })
export class QuotaRuleInfoWire {
  @ApiPropertyOptional({ description: 'Name of the rule (only shown to admins)' }) name?: string;
  @ApiProperty({ format: 'int64', description: 'The limit set by the rule, in bytes (-1 unlimited)' }) limit: number;
  @ApiPropertyOptional({ type: [String], description: 'Subjects the rule affects' }) subjects?: string[];
}

/** `QuotaGroup` (docs/quota.md). */
@ApiSchema({ name: 'QuotaGroup' })
export class QuotaGroupWire {
  @ApiPropertyOptional({ description: 'Name of the group (only shown to admins)' }) name?: string;
  @ApiProperty({ type: [QuotaRuleInfoWire], description: 'Rules associated with the group' }) rules: QuotaRuleInfoWire[];
}

@ApiSchema({ name: 'QuotaUsedSizeRepos' })
export class QuotaUsedSizeReposWire {
  @ApiProperty({ format: 'int64', description: "Storage size of the user's public repositories" }) public: number;
  @ApiProperty({ format: 'int64', description: "Storage size of the user's private repositories" }) private: number;
}

@ApiSchema({ name: 'QuotaUsedSizeGit' })
export class QuotaUsedSizeGitWire {
  @ApiProperty({ format: 'int64', description: "Storage size of the user's Git LFS objects, each object counted once" }) LFS: number;
}

@ApiSchema({ name: 'QuotaUsedSizeAssetsAttachments' })
export class QuotaUsedSizeAssetsAttachmentsWire {
  @ApiProperty({ format: 'int64', description: "Storage size used for the user's issue and comment attachments" }) issues: number;
  @ApiProperty({ format: 'int64', description: "Storage size used for the user's release attachments" }) releases: number;
}

@ApiSchema({ name: 'QuotaUsedSizeAssetsPackages' })
export class QuotaUsedSizeAssetsPackagesWire {
  @ApiProperty({ format: 'int64', description: "Storage size used for the user's packages" }) all: number;
}

@ApiSchema({ name: 'QuotaUsedSizeAssets' })
export class QuotaUsedSizeAssetsWire {
  @ApiProperty({ type: QuotaUsedSizeAssetsAttachmentsWire }) attachments: QuotaUsedSizeAssetsAttachmentsWire;
  @ApiProperty({ format: 'int64', description: "Storage size used for the user's artifacts" }) artifacts: number;
  @ApiProperty({ type: QuotaUsedSizeAssetsPackagesWire }) packages: QuotaUsedSizeAssetsPackagesWire;
}

@ApiSchema({ name: 'QuotaUsedSize' })
export class QuotaUsedSizeWire {
  @ApiProperty({ type: QuotaUsedSizeReposWire }) repos: QuotaUsedSizeReposWire;
  @ApiProperty({ type: QuotaUsedSizeGitWire }) git: QuotaUsedSizeGitWire;
  @ApiProperty({ type: QuotaUsedSizeAssetsWire }) assets: QuotaUsedSizeAssetsWire;
}

@ApiSchema({ name: 'QuotaUsed' })
export class QuotaUsedWire {
  @ApiProperty({ type: QuotaUsedSizeWire }) size: QuotaUsedSizeWire;
}

/** `QuotaInfo` (docs/quota.md). */
@ApiSchema({ name: 'QuotaInfo' })
export class QuotaInfoWire {
  @ApiProperty({ type: QuotaUsedWire }) used: QuotaUsedWire;
  @ApiProperty({ type: [QuotaGroupWire] }) groups: QuotaGroupWire[];
}

@ApiSchema({ name: 'QuotaUsedAttachmentContainedIn' })
export class QuotaUsedAttachmentContainedInWire {
  @ApiProperty({ description: 'API URL for the object that contains this attachment' }) api_url: string;
  @ApiProperty({ description: 'HTML URL for the object that contains this attachment' }) html_url: string;
}

/** `QuotaUsedAttachment`: a release attachment counting against the target's quota. */
@ApiSchema({ name: 'QuotaUsedAttachment' })
export class QuotaUsedAttachmentWire {
  @ApiProperty({ description: 'Filename of the attachment' }) name: string;
  @ApiProperty({ format: 'int64', description: 'Size of the attachment (in bytes)' }) size: number;
  @ApiProperty({ description: 'API URL for the attachment' }) api_url: string;
  @ApiProperty({ type: QuotaUsedAttachmentContainedInWire }) contained_in: QuotaUsedAttachmentContainedInWire;
}

/** `QuotaUsedPackage`: a package version counting against the target's quota. */
@ApiSchema({ name: 'QuotaUsedPackage' })
export class QuotaUsedPackageWire {
  @ApiProperty({ description: 'Name of the package' }) name: string;
  @ApiProperty({ description: 'Type of the package' }) type: string;
  @ApiProperty({ description: 'Version of the package' }) version: string;
  @ApiProperty({ format: 'int64', description: 'Size of the package version' }) size: number;
  @ApiProperty({ description: 'HTML URL to the package version' }) html_url: string;
}

/** `QuotaUsedArtifact`: Anvil has no CI runner, so no artifact is ever listed. */
@ApiSchema({ name: 'QuotaUsedArtifact' })
export class QuotaUsedArtifactWire {
  @ApiProperty({ description: 'Name of the artifact' }) name: string;
  @ApiProperty({ format: 'int64', description: 'Size of the artifact (compressed)' }) size: number;
  @ApiProperty({ description: 'HTML URL to the action run containing the artifact' }) html_url: string;
}
