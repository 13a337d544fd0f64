import { MigrationInterface, QueryRunner, TableIndex } from 'typeorm';

/**
 * No query looks a delivery up by its claim token alone (a claim is written by id and given back by hook), yet
 * the index on it was rewritten by every claim, outcome and release: three index updates per delivery sent.
 */
export class DropWebhookDeliveryClaimIndex1795720000000 implements MigrationInterface {
  name = 'DropWebhookDeliveryClaimIndex1795720000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropIndex('webhook_delivery', 'IDX_webhook_delivery_claim_token');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.createIndex('webhook_delivery', new TableIndex({ name: 'IDX_webhook_delivery_claim_token', columnNames: ['claim_token'] }));
  }
}
